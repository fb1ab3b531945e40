use super::*;

#[test]
fn fusion_ranks_what_both_lists_found_first() {
    let fused = reciprocal_rank_fusion(&[vec![1, 2, 3], vec![3, 4]], 60.0);
    let ids: Vec<i64> = fused.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, [3, 1, 2, 4]);
    assert!((fused[0].1 - (1.0 / 63.0 + 1.0 / 61.0)).abs() < 1e-12);
}

/// A small deterministic generator of values in [-1, 1).
fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        })
        .collect()
}

#[test]
fn the_first_pass_keeps_exactly_the_rows_of_the_smallest_distances() {
    let distance: Vec<u16> = values(7, 5_000)
        .iter()
        .map(|x| ((x + 1.0) * 100.0) as u16)
        .collect();
    for keep in [1, 10, 999, 4_999] {
        let rows = nearest_rows(&distance, 200, keep);
        assert_eq!(rows.len(), keep);
        let mut sorted = distance.clone();
        sorted.sort();
        let worst_kept = rows.iter().map(|i| distance[*i]).max();
        assert_eq!(worst_kept, Some(sorted[keep - 1]), "keep {keep}");
        assert!(rows.windows(2).all(|w| w[0] < w[1]), "in row order");
    }
    assert_eq!(nearest_rows(&distance[..3], 200, 10), [0, 1, 2]);
    // Ties at the cut go to the first rows.
    assert_eq!(nearest_rows(&[5, 1, 5, 5, 0], 8, 3), [0, 1, 4]);
}

#[test]
fn hamming_distances_and_byte_products_match_plain_arithmetic() {
    // Widths with and without a loop of their own, and not multiples of 16 or 64.
    for dims in [3, 100, 384, 768, 1_000] {
        let mut g = Group {
            dims,
            ..Group::default()
        };
        let rows: Vec<Vec<f32>> = (0..50).map(|i| unit(&values(i + 1, dims))).collect();
        for (i, v) in rows.iter().enumerate() {
            g.push(i as i64, v);
        }
        let q = unit(&values(99, dims));
        let probe = Probe::of(&q);
        let d = distances(&g.bits, &probe.bits);
        assert_eq!(d.len(), rows.len());
        for (i, v) in rows.iter().enumerate() {
            let differ = v.iter().zip(&q).filter(|(a, b)| (**a > 0.0) != (**b > 0.0));
            assert_eq!(usize::from(d[i]), differ.count(), "dims {dims} row {i}");
            let exact: f32 = v.iter().zip(&q).map(|(a, b)| a * b).sum();
            let s = g.similarity(i, &probe);
            assert!(
                (s - exact).abs() < 0.02,
                "dims {dims} row {i}: {s} vs {exact}"
            );
        }
        let all: Vec<usize> = (0..rows.len()).collect();
        let ranked = g.rerank(&all, &probe, 0.1);
        assert!(ranked.iter().all(|(_, s)| *s >= 0.1));
    }
}

#[test]
fn a_group_forgets_what_it_removes_and_ranks_by_cosine() {
    let mut g = Group {
        dims: 3,
        ..Group::default()
    };
    g.push(1, &unit(&[1.0, 0.0, 0.0]));
    g.push(2, &unit(&[0.0, 1.0, 0.0]));
    g.push(3, &unit(&[1.0, 1.0, 0.0]));
    g.remove(1);
    assert_eq!(g.ids, [3, 2]);
    let q = Probe::of(&unit(&[1.0, 0.9, 0.0]));
    assert!(g.similarity(0, &q) > g.similarity(1, &q));
    assert!((g.similarity(0, &q) - 0.9986).abs() < 0.01);
}
