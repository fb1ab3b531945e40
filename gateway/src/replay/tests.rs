use super::*;

#[test]
fn unknown_kinds_and_bad_lines_name_the_line() {
    let e = parse(
        "{\"pair\":{\"channel\":\"discord\",\"user\":\"1\",\"role\":\"admin\"}}\n{\"dance\":{}}",
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("line 2:"), "{e}");
    let e = parse("{not json").unwrap_err();
    assert!(e.to_string().starts_with("line 1:"), "{e}");
    let e =
        parse("{\"pair\":{\"channel\":\"discord\",\"user\":\"1\",\"role\":\"boss\"}}").unwrap_err();
    assert!(e.to_string().contains("line 1"), "{e}");
}
