//! Unified line diffs, as `diff -u` prints them, for `kfctl-rs diff`'s YAML per object.
//!
//! The common prefix and suffix are cut first (an object's change is usually a few lines in
//! a long document), then the middle is aligned by a longest common subsequence. A middle too
//! large to align cheaply is shown as removed-then-added, which is still a correct diff.

/// Lines of context around each change, as `diff -u`.
const CONTEXT: usize = 3;

/// The largest middle (lines before × lines after) aligned line by line.
const MAX_ALIGNED_CELLS: usize = 4_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Keep,
    Remove,
    Add,
}

/// `before` and `after` as a unified diff with `---`/`+++` headers; empty when equal.
pub(crate) fn unified(before: &str, after: &str, before_name: &str, after_name: &str) -> String {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let ops = edit_script(&a, &b);
    if ops.iter().all(|op| *op == Op::Keep) {
        return String::new();
    }
    let mut out = format!("--- {before_name}\n+++ {after_name}\n");
    for hunk in hunks(&ops) {
        render_hunk(&mut out, &ops, hunk, &a, &b);
    }
    out
}

/// The operations turning `a` into `b`.
fn edit_script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let rest_a = &a[prefix..];
    let rest_b = &b[prefix..];
    let suffix = rest_a.iter().rev().zip(rest_b.iter().rev()).take_while(|(x, y)| x == y).count();
    let (mid_a, mid_b) = (&rest_a[..rest_a.len() - suffix], &rest_b[..rest_b.len() - suffix]);
    let mut ops = vec![Op::Keep; prefix];
    if mid_a.len().saturating_mul(mid_b.len()) > MAX_ALIGNED_CELLS {
        ops.extend(std::iter::repeat_n(Op::Remove, mid_a.len()));
        ops.extend(std::iter::repeat_n(Op::Add, mid_b.len()));
    } else {
        ops.extend(aligned(mid_a, mid_b));
    }
    ops.extend(std::iter::repeat_n(Op::Keep, suffix));
    ops
}

/// A longest-common-subsequence alignment (removals before additions at each change).
fn aligned(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] =
                if a[i] == b[j] { lcs[at(i + 1, j + 1)] + 1 } else { lcs[at(i + 1, j)].max(lcs[at(i, j + 1)]) };
        }
    }
    let (mut i, mut j, mut ops) = (0, 0, Vec::with_capacity(n + m));
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Keep);
            (i, j) = (i + 1, j + 1);
        } else if j == m || (i < n && lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            ops.push(Op::Remove);
            i += 1;
        } else {
            ops.push(Op::Add);
            j += 1;
        }
    }
    ops
}

/// Ranges of `ops` to print: each change with its context, overlapping ones merged.
fn hunks(ops: &[Op]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (index, _) in ops.iter().enumerate().filter(|(_, op)| **op != Op::Keep) {
        let start = index.saturating_sub(CONTEXT);
        let end = (index + CONTEXT + 1).min(ops.len());
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = end,
            _ => out.push((start, end)),
        }
    }
    out
}

fn render_hunk(out: &mut String, ops: &[Op], (start, end): (usize, usize), a: &[&str], b: &[&str]) {
    let line_before = ops[..start].iter().filter(|op| **op != Op::Add).count();
    let line_after = ops[..start].iter().filter(|op| **op != Op::Remove).count();
    let span = &ops[start..end];
    let count_before = span.iter().filter(|op| **op != Op::Add).count();
    let count_after = span.iter().filter(|op| **op != Op::Remove).count();
    let first = |line: usize, count: usize| if count == 0 { line } else { line + 1 };
    out.push_str(&format!(
        "@@ -{},{count_before} +{},{count_after} @@\n",
        first(line_before, count_before),
        first(line_after, count_after)
    ));
    let (mut i, mut j) = (line_before, line_after);
    for op in span {
        match op {
            Op::Keep => {
                out.push_str(&format!(" {}\n", a[i]));
                (i, j) = (i + 1, j + 1);
            }
            Op::Remove => {
                out.push_str(&format!("-{}\n", a[i]));
                i += 1;
            }
            Op::Add => {
                out.push_str(&format!("+{}\n", b[j]));
                j += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line_shows_with_three_lines_of_context() {
        let before = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let after = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let diff = unified(before, after, "live", "merged");
        assert_eq!(diff, "--- live\n+++ merged\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n");
    }

    #[test]
    fn equal_texts_give_nothing_and_new_files_are_all_additions() {
        assert_eq!(unified("a\n", "a\n", "x", "y"), "");
        assert_eq!(unified("", "a\nb\n", "/dev/null", "y"), "--- /dev/null\n+++ y\n@@ -0,0 +1,2 @@\n+a\n+b\n");
    }

    #[test]
    fn insertions_and_removals_align_on_common_lines() {
        let diff = unified("k: 1\nx: 2\nz: 3\n", "k: 1\ny: 9\nz: 3\nw: 4\n", "a", "b");
        assert!(diff.contains("-x: 2\n+y: 9\n z: 3\n+w: 4\n"), "{diff}");
    }
}
