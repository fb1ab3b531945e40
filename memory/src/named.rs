//! `named_enum!`: one declaration for the enums steward names by text — in
//! the database, the API, the CLI and the audit trail — so that serde and
//! strum can never disagree on a variant's name.

/// Declares a fieldless enum named by its variants in snake_case (a variant's
/// own `#[serde(rename)]` and `#[strum(serialize)]` win): serialised and
/// parsed (`FromStr`) by that name, which `as_str` and `Display` give, with
/// every variant listed by `VARIANTS`. Binding it to a query is
/// `store::text_enum!`'s.
macro_rules! named_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($variants:tt)* }) => {
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            Hash,
            ::serde::Serialize,
            ::serde::Deserialize,
            ::strum::EnumString,
            ::strum::IntoStaticStr,
            ::strum::VariantArray,
        )]
        #[serde(rename_all = "snake_case")]
        #[strum(serialize_all = "snake_case")]
        $(#[$meta])*
        $vis enum $name { $($variants)* }

        impl $name {
            /// The variant's name.
            pub fn as_str(self) -> &'static str {
                self.into()
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
