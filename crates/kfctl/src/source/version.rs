//! Release versions of kubeflow/manifests, across both of upstream's schemes.
//!
//! Up to v1.11.0 upstream tagged semantic versions with a `v` (`v1.10.2`, `v1.11.0`). From
//! 26.03 on it tags calendar versions `YY.MM[.PATCH]` with no `v` (`26.03`, `26.03.1`, `26.10`).
//! `26.03` is not a valid semantic version (a leading zero), so nothing here hands a release's
//! text to `semver` directly: [`ReleaseVersion`] reads either scheme into three numbers, which
//! order both schemes as one line (`v1.10.2 < v1.11.0 < 26.03 < 26.03.1 < 26.10`), and
//! [`ReleaseVersion::semver`] and [`requirement`] give `semver` only normalised numbers, so a
//! profile's `releases:` requirement may say `>=26.03` or `<1.11.0` alike.
//!
//! Spellings of one version are one version: `26.3`, `v26.03` and `26.03.0` are 26.03;
//! `26.3.1`, `v26.03.1` and `26.03.01` are 26.03.1; `1.11.0` is v1.11.0. Which spellings select
//! which known release is [`super::releases::select`]'s business; a whole version no release
//! has is an upstream tag ([`ReleaseVersion::as_tag`], `super::by_name`), written as upstream
//! tags it.

use std::cmp::Ordering;
use std::fmt;

/// A release version of either scheme: its numbers, and whether it is a calendar version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ReleaseVersion {
    /// major (or year), minor (or month), patch; a missing part is 0.
    pub parts: [u64; 3],
    /// How many parts the text had (1 to 3): `1.11` is a prefix, `1.11.0` a whole version.
    pub given: usize,
}

/// Calendar versions start at year 20 (`YY`); semantic versions of kubeflow/manifests never
/// reached major 20, so the first number tells the schemes apart.
const FIRST_CALENDAR_YEAR: u64 = 20;

impl ReleaseVersion {
    /// Read `v1.11.0`, `1.11`, `26.03`, `26.03.1`, `v26.03`: one to three dot-separated whole
    /// numbers after an optional `v`. `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<ReleaseVersion> {
        let text = text.trim();
        let digits = text.strip_prefix('v').or_else(|| text.strip_prefix('V')).unwrap_or(text);
        let mut parts = [0u64; 3];
        let mut given = 0;
        for piece in digits.split('.') {
            if given == 3 || piece.is_empty() || piece.len() > 9 || !piece.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            parts[given] = piece.parse().ok()?;
            given += 1;
        }
        Some(ReleaseVersion { parts, given })
    }

    /// Whether this is a calendar version (`YY.MM[.PATCH]`).
    pub(crate) fn is_calendar(&self) -> bool {
        self.parts[0] >= FIRST_CALENDAR_YEAR
    }

    /// The same numbers as a semantic version, for `semver` requirements.
    pub(crate) fn semver(&self) -> semver::Version {
        semver::Version::new(self.parts[0], self.parts[1], self.parts[2])
    }

    /// How upstream writes this version: `v1.11.0`, `26.03`, `26.03.1`.
    pub(crate) fn canonical(&self) -> String {
        let [a, b, c] = self.parts;
        match (self.is_calendar(), c) {
            (true, 0) => format!("{a}.{b:02}"),
            (true, _) => format!("{a}.{b:02}.{c}"),
            (false, _) => format!("v{a}.{b}.{c}"),
        }
    }

    /// The upstream tag this version is, when it is whole enough to be one: a calendar
    /// `YY.MM[.PATCH]` (`26.10`, `26.3.9` → `26.03.9`, `26.10.0` → `26.10`) or a semantic
    /// `MAJOR.MINOR.PATCH` (`1.12.0` → `v1.12.0`), written as upstream tags it. `None` for a
    /// prefix (`1.12`, `26`) or a four-digit year (`2026.03`: upstream writes `26.03`).
    pub(crate) fn as_tag(&self) -> Option<String> {
        let whole = match self.is_calendar() {
            true => self.given >= 2 && self.parts[0] < 100,
            false => self.given == 3,
        };
        whole.then(|| self.canonical())
    }

    /// Whether `self`, read as a prefix of `given` parts, covers `version` (`1.11` covers
    /// v1.11.0 and v1.11.3, not v1.110.0).
    pub(crate) fn covers(&self, version: &ReleaseVersion) -> bool {
        self.parts[..self.given] == version.parts[..self.given]
    }
}

impl Ord for ReleaseVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.parts.cmp(&other.parts)
    }
}

impl PartialOrd for ReleaseVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for ReleaseVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

/// A `semver` requirement whose versions may be written in either scheme (`>=26.03`,
/// `<1.11.0`, `>=v1.10, <26.03`): each version in it is normalised to plain numbers first.
pub(crate) fn requirement(text: &str) -> Result<semver::VersionReq, String> {
    let mut normalised = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match ReleaseVersion::parse(word) {
            Some(v) if word.contains('.') || word.bytes().all(|b| b.is_ascii_digit()) => {
                let numbers: Vec<String> = v.parts[..v.given].iter().map(u64::to_string).collect();
                out.push_str(&numbers.join("."));
            }
            _ => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            word.push(c);
        } else {
            flush(&mut word, &mut normalised);
            normalised.push(c);
        }
    }
    flush(&mut word, &mut normalised);
    semver::VersionReq::parse(&normalised).map_err(|e| format!("`{text}`: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> ReleaseVersion {
        ReleaseVersion::parse(text).unwrap_or_else(|| panic!("{text} parses"))
    }

    #[test]
    fn both_schemes_order_as_one_line() {
        let line = ["v1.10.0", "v1.10.2", "v1.11.0", "26.03", "26.03.1", "26.10", "27.04"];
        for pair in line.windows(2) {
            assert!(v(pair[0]) < v(pair[1]), "{} < {}", pair[0], pair[1]);
        }
    }

    #[test]
    fn spellings_of_one_version_are_equal_and_print_as_upstream_writes_them() {
        for spelling in ["26.03", "26.3", "v26.03", "26.03.0"] {
            assert_eq!(v(spelling).parts, [26, 3, 0], "{spelling}");
            assert_eq!(v(spelling).canonical(), "26.03");
        }
        assert_eq!(v("1.11.0").canonical(), "v1.11.0");
        assert_eq!(v("26.03.1").canonical(), "26.03.1");
        assert!(v("26.03").is_calendar() && !v("v1.11.0").is_calendar());
    }

    #[test]
    fn prefixes_cover_whole_parts_only() {
        assert!(v("1.11").covers(&v("v1.11.3")) && !v("1.1").covers(&v("v1.11.0")));
        assert!(v("26").covers(&v("26.10")) && !v("26.03").covers(&v("26.10")));
    }

    #[test]
    fn spellings_of_26_03_1_are_one_version() {
        for spelling in ["26.03.1", "26.3.1", "v26.03.1", "26.03.01", "V26.3.01", " 26.03.1 "] {
            assert_eq!(v(spelling).parts, [26, 3, 1], "{spelling}");
            assert_eq!(v(spelling).canonical(), "26.03.1", "{spelling}");
            assert_eq!(v(spelling).as_tag().as_deref(), Some("26.03.1"), "{spelling}");
        }
        assert_ne!(v("26.03.1"), v("26.03.10"));
    }

    #[test]
    fn whole_versions_are_tags_and_prefixes_are_not() {
        let tag = |text: &str| v(text).as_tag();
        assert_eq!(tag("26.10").as_deref(), Some("26.10"));
        assert_eq!(tag("26.10.0").as_deref(), Some("26.10"));
        assert_eq!(tag("v26.10").as_deref(), Some("26.10"));
        assert_eq!(tag("26.3.9").as_deref(), Some("26.03.9"));
        assert_eq!(tag("v1.12.0").as_deref(), Some("v1.12.0"));
        assert_eq!(tag("1.12.0").as_deref(), Some("v1.12.0"));
        for prefix in ["1.12", "v1", "26", "2026.03"] {
            assert_eq!(tag(prefix), None, "{prefix}");
        }
    }

    #[test]
    fn not_versions() {
        for bad in ["", "v", "latest", "1..2", "1.2.3.4", "1.x", "-1", "1.2-rc.1", "99999999999"] {
            assert_eq!(ReleaseVersion::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn requirements_take_either_scheme() {
        let req = requirement(">=26.03").unwrap();
        assert!(req.matches(&v("26.03").semver()) && req.matches(&v("26.10").semver()));
        assert!(!req.matches(&v("v1.11.0").semver()));
        let old = requirement("<1.11.0").unwrap();
        assert!(old.matches(&v("v1.10.2").semver()) && !old.matches(&v("26.03").semver()));
        let range = requirement(">=v1.11.0, <26.03").unwrap();
        assert!(range.matches(&v("v1.11.0").semver()) && !range.matches(&v("26.03").semver()));
        assert!(requirement(">=banana").is_err());
    }
}
