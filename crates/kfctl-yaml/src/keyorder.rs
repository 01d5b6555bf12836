//! The order in which kustomize writes mapping keys: go-yaml's `keyList.Less`.
//!
//! kustomize's output is produced by go-yaml v2 from Go maps, which it sorts with a "natural"
//! order. All keys reach it as strings (they come out of JSON), so only the string branch
//! applies. Comparing rune by rune, at the first difference:
//!
//! 1. two letters compare by code point (`B` < `R` < `a`);
//! 2. a letter sorts after a non-letter (`_x` < `ax`, `A_B` < `AB`, `jwks_uri` < `jwksUri`);
//! 3. otherwise the digit runs starting there compare as numbers (`a9` < `a10`), a shorter run
//!    first when equal (`a1` < `a01`), then by code point; a run of zeros that continues a
//!    non-zero number counts as a non-zero number (Go's quirk, kept).
//!
//! If one key is a prefix of the other, the shorter one comes first. "Letter" and "digit" are
//! Unicode's `L` and `Nd` categories (`unicode.IsLetter`, `unicode.IsDigit`); digit runs are
//! accumulated in wrapping 64-bit arithmetic, as Go does.

use std::cmp::Ordering;
use std::sync::OnceLock;

/// go-yaml's mapping key order (total for distinct keys).
pub fn go_yaml_key_cmp(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let less = if a.is_ascii() && b.is_ascii() {
        key_less(a.as_bytes(), b.as_bytes())
    } else {
        let (ar, br): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        key_less(&ar, &br)
    };
    if less { Ordering::Less } else { Ordering::Greater }
}

/// A character as `keyList.Less` inspects it.
trait Rune: Copy + PartialEq + PartialOrd {
    fn is_letter(self) -> bool;
    fn is_digit(self) -> bool;
    /// `int64(r - '0')`.
    fn digit_value(self) -> i64;
    fn is_zero(self) -> bool;
}

impl Rune for u8 {
    fn is_letter(self) -> bool {
        self.is_ascii_alphabetic()
    }
    fn is_digit(self) -> bool {
        self.is_ascii_digit()
    }
    fn digit_value(self) -> i64 {
        i64::from(self) - i64::from(b'0')
    }
    fn is_zero(self) -> bool {
        self == b'0'
    }
}

impl Rune for char {
    fn is_letter(self) -> bool {
        if self.is_ascii() {
            return self.is_ascii_alphabetic();
        }
        static LETTER: OnceLock<regex::Regex> = OnceLock::new();
        let letter = LETTER.get_or_init(|| regex::Regex::new(r"^\p{L}$").expect("valid pattern"));
        letter.is_match(self.encode_utf8(&mut [0; 4]))
    }
    fn is_digit(self) -> bool {
        if (self as u32) <= 0xFF {
            return self.is_ascii_digit();
        }
        static DIGIT: OnceLock<regex::Regex> = OnceLock::new();
        let digit = DIGIT.get_or_init(|| regex::Regex::new(r"^\p{Nd}$").expect("valid pattern"));
        digit.is_match(self.encode_utf8(&mut [0; 4]))
    }
    fn digit_value(self) -> i64 {
        i64::from(self as u32) - i64::from(b'0')
    }
    fn is_zero(self) -> bool {
        self == '0'
    }
}

/// A port of `keyList.Less` for two string keys.
fn key_less<R: Rune>(ar: &[R], br: &[R]) -> bool {
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let (al, bl) = (ar[i].is_letter(), br[i].is_letter());
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i].is_zero() || br[i].is_zero() {
            for j in (0..i).rev() {
                if !ar[j].is_digit() {
                    break;
                }
                if !ar[j].is_zero() {
                    (an, bn) = (1, 1);
                    break;
                }
            }
        }
        let (ai, an) = digit_run(ar, i, an);
        let (bi, bn) = digit_run(br, i, bn);
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

/// Accumulate the digit run starting at `start`; returns where it ends and its value.
fn digit_run<R: Rune>(runes: &[R], start: usize, mut n: i64) -> (usize, i64) {
    let mut i = start;
    while i < runes.len() && runes[i].is_digit() {
        n = n.wrapping_mul(10).wrapping_add(runes[i].digit_value());
        i += 1;
    }
    (i, n)
}

#[cfg(test)]
mod tests {
    use super::go_yaml_key_cmp;
    use std::cmp::Ordering;

    fn sorted(keys: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = keys.iter().map(|s| s.to_string()).collect();
        v.sort_by(|a, b| go_yaml_key_cmp(a, b));
        v
    }

    /// The order real kustomize v5.6 printed for these keys (fixture `keys` in the tests).
    #[test]
    fn order_matches_kustomize_output() {
        let expected = [
            "-x",
            "_x",
            "1",
            "2",
            "10",
            "8080",
            "A_B",
            "AB",
            "ARTIFACT_BUCKET",
            "ARTIFACT_RETENTION_DAYS",
            "ARTIFACTS",
            "Zeta",
            "a1",
            "a01",
            "a9",
            "a10",
            "alpha",
            "jwks_uri",
            "jwksUri",
            "ä",
        ];
        let mut shuffled = expected.to_vec();
        shuffled.reverse();
        shuffled.swap(3, 11);
        assert_eq!(sorted(&shuffled), expected);
    }

    #[test]
    fn letters_sort_after_non_letters() {
        assert_eq!(go_yaml_key_cmp("a_b", "ab"), Ordering::Less);
        assert_eq!(go_yaml_key_cmp("a.b", "ab"), Ordering::Less);
        assert_eq!(go_yaml_key_cmp("ab", "a-b"), Ordering::Greater);
    }

    #[test]
    fn digit_runs_compare_numerically() {
        assert_eq!(go_yaml_key_cmp("x9y", "x10y"), Ordering::Less);
        assert_eq!(go_yaml_key_cmp("v1.10", "v1.9"), Ordering::Greater);
        assert_eq!(go_yaml_key_cmp("x101", "x1001"), Ordering::Less);
    }

    #[test]
    fn prefix_sorts_first_and_equal_is_equal() {
        assert_eq!(go_yaml_key_cmp("abc", "abcd"), Ordering::Less);
        assert_eq!(go_yaml_key_cmp("same", "same"), Ordering::Equal);
    }

    #[test]
    fn non_ascii_letters_use_unicode_categories() {
        assert_eq!(go_yaml_key_cmp("é", "_"), Ordering::Greater, "é is a letter");
        assert_eq!(go_yaml_key_cmp("x٣", "x2"), Ordering::Greater, "Arabic-Indic three is a digit");
    }
}
