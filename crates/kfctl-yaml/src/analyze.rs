//! Scalar analysis: which styles a string allows, per libyaml's `yaml_emitter_analyze_scalar`.
//!
//! The emitter looks at every character of a scalar before choosing its style: indicators that
//! forbid a plain scalar (`- `, `: `, ` #`, a leading `*`, `'`, `{`...), leading or trailing
//! spaces and line breaks, characters libyaml deems non-printable (C0/C1 controls, tab, BOM,
//! anything outside the Basic Multilingual Plane), a space before a line break (which also rules
//! out a literal block) and a line break before a space (which rules out single quotes).
//!
//! Only block context is analysed: kustomize never writes a scalar inside a flow collection.
//! The byte-level character classes (`is_break`, `is_printable`...) are shared with the writers.
//!
//! The writer first takes a scalar's [`Shape`] (printable ASCII without spaces, ASCII text with
//! line feeds, ASCII at all), eight bytes at a time; the shape picks the shortcuts: a word is
//! written without analysis (`scalar::is_plain_word`), ASCII text is analysed by looking only at
//! its `:`, `#` and line feeds, and only other scalars take the character-by-character port.

/// What `yaml_emitter_analyze_scalar` concludes about a scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Analysis {
    pub empty: bool,
    pub multiline: bool,
    pub block_plain_allowed: bool,
    pub single_quoted_allowed: bool,
    pub block_allowed: bool,
}

/// The byte classes of a scalar that pick the writer's shortcuts, found in one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    /// Every byte is printable ASCII other than the space (0x21-0x7E): no blanks, no breaks,
    /// nothing to escape but `"` and `\`, one column per byte.
    pub visible: bool,
    /// Every byte is printable ASCII or a line feed (0x20-0x7E, 0x0A): the only break is `\n`,
    /// and nothing is non-printable.
    pub text: bool,
    /// Every byte is ASCII: one column per byte, no NEL to re-read.
    pub ascii: bool,
}

/// The [`Shape`] of `b`, eight bytes at a time.
pub(super) fn shape(b: &[u8]) -> Shape {
    // Per-byte masks (the high bit of each byte), exact for ASCII bytes: no carry leaves a
    // byte, as its low seven bits plus at most 0x7F stay below 0x100.
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW: u64 = ONES * 0x7F;
    const HIGH: u64 = ONES * 0x80;
    let (mut not_visible, mut not_text, mut high) = (0u64, 0u64, 0u64);
    let classify = |x: u64| {
        let low = x & LOW;
        let del = low + ONES; // 0x7F
        not_visible |= !(low + ONES * 0x5F) | del; // below 0x21, or 0x7F
        // Below 0x20 but not a line feed: XOR with 0x0A turns exactly the line feeds into 0
        // and keeps every other byte below 0x20 there and non-zero.
        let y = low ^ (ONES * 0x0A);
        not_text |= (!(y + ONES * 0x60) & (y + LOW)) | del;
        high |= x;
    };
    for_words(b, classify);
    let ascii = high & HIGH == 0;
    Shape { visible: ascii && not_visible & HIGH == 0, text: ascii && not_text & HIGH == 0, ascii }
}

/// Call `f` with eight-byte words that together cover every byte of `b` and hold nothing
/// else (they may overlap), for "every byte is ..." tests without a byte loop.
fn for_words(b: &[u8], mut f: impl FnMut(u64)) {
    let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
    let half = |i: usize| u64::from(u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or([0; 4])));
    let n = b.len();
    if n >= 8 {
        let mut i = 0;
        while i + 8 <= n {
            f(word(i));
            i += 8;
        }
        if i < n {
            f(word(n - 8));
        }
    } else if n >= 4 {
        f(half(0) | half(n - 4) << 32);
    } else if n > 0 {
        let (first, middle, last) = (b[0], b[n / 2], b[n - 1]);
        f(u64::from_le_bytes([first, middle, last, last, last, last, last, last]));
    }
}

/// `yaml_emitter_analyze_scalar` (the block-context half of it).
#[cfg(test)]
pub(super) fn analyze(value: &str) -> Analysis {
    analyze_shaped(value.as_bytes(), shape(value.as_bytes()))
}

/// [`analyze`] of a scalar whose [`shape`] is known.
pub(super) fn analyze_shaped(b: &[u8], shape: Shape) -> Analysis {
    if b.is_empty() {
        return Analysis {
            empty: true,
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    if shape.visible {
        return analyze_visible_ascii(b);
    }
    if shape.text {
        return analyze_ascii_text(b);
    }
    analyze_general(b)
}

/// The full character-by-character analysis of a non-empty scalar.
fn analyze_general(b: &[u8]) -> Analysis {
    let mut block_indicators = b.starts_with(b"---") || b.starts_with(b"...");
    let (mut line_breaks, mut special) = (false, false);
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    let mut i = 0;
    while i < b.len() {
        let w = width(b[i]);
        let followed_by_whitespace = i + w >= b.len() || is_blank(b, i + w);
        block_indicators |= match (i, b[i]) {
            (0, b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>') => true,
            (0, b'\'' | b'"' | b'%' | b'@' | b'`') => true,
            (0, b'?' | b':' | b'-') => followed_by_whitespace,
            (_, b':') => followed_by_whitespace,
            (_, b'#') => preceded_by_whitespace,
            _ => false,
        };
        special |= !is_printable(b, i);
        let last = i + w == b.len();
        if b[i] == b' ' {
            leading_space |= i == 0;
            trailing_space |= last;
            break_space |= previous_break;
            (previous_space, previous_break) = (true, false);
        } else if is_break(b, i) {
            line_breaks = true;
            leading_break |= i == 0;
            trailing_break |= last;
            space_break |= previous_space;
            (previous_space, previous_break) = (false, true);
        } else {
            (previous_space, previous_break) = (false, false);
        }
        preceded_by_whitespace = is_blank(b, i) || is_break(b, i) || b[i] == 0;
        i += w;
    }
    let edges = leading_space || leading_break || trailing_space || trailing_break;
    Analysis {
        empty: false,
        multiline: line_breaks,
        block_plain_allowed: !(edges || break_space || space_break || special || line_breaks || block_indicators),
        single_quoted_allowed: !(break_space || space_break || special),
        block_allowed: !(trailing_space || space_break || special),
    }
}

/// The common case, printable ASCII without spaces: only the first and last characters can be
/// indicators (a `: ` needs a following blank, a ` #` a preceding one), nothing else matters.
fn analyze_visible_ascii(b: &[u8]) -> Analysis {
    let first_forbids = match b[0] {
        b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>' => true,
        b'\'' | b'"' | b'%' | b'@' | b'`' => true,
        b'?' | b'-' => b.len() == 1,
        _ => false,
    };
    let block_indicators = first_forbids || b.ends_with(b":") || b.starts_with(b"---") || b.starts_with(b"...");
    Analysis {
        empty: false,
        multiline: false,
        block_plain_allowed: !block_indicators,
        single_quoted_allowed: true,
        block_allowed: true,
    }
}

/// Printable ASCII with spaces and line feeds (descriptions, configuration files): every
/// character is printable, so only the indicators and the space/break neighbourhoods matter,
/// each decided by a character and the one before or after it.
fn analyze_ascii_text(b: &[u8]) -> Analysis {
    let (n, last) = (b.len(), b[b.len() - 1]);
    let first_forbids = match b[0] {
        b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>' => true,
        b'\'' | b'"' | b'%' | b'@' | b'`' => true,
        b'?' | b':' | b'-' => n == 1 || b[1] == b' ',
        _ => false,
    };
    let mut block_indicators = first_forbids || b.starts_with(b"---") || b.starts_with(b"...");
    let (mut line_breaks, mut break_space, mut space_break) = (false, false, false);
    // Only a `:`, `#` or line feed and its neighbours matter; eight-byte chunks without any of
    // them are skipped whole.
    let mut start = 0;
    while start < n {
        let end = (start + 8).min(n);
        if end - start == 8 && !has_colon_hash_or_break(&b[start..end]) {
            start = end;
            continue;
        }
        for i in start..end {
            match b[i] {
                b':' if i > 0 => block_indicators |= i + 1 == n || b[i + 1] == b' ',
                b'#' if i > 0 => block_indicators |= matches!(b[i - 1], b' ' | b'\n'),
                b'\n' => {
                    line_breaks = true;
                    space_break |= i > 0 && b[i - 1] == b' ';
                    break_space |= i + 1 < n && b[i + 1] == b' ';
                }
                _ => {}
            }
        }
        start = end;
    }
    let trailing_space = last == b' ';
    let edges = b[0] == b' ' || b[0] == b'\n' || trailing_space || last == b'\n';
    Analysis {
        empty: false,
        multiline: line_breaks,
        block_plain_allowed: !(edges || break_space || space_break || line_breaks || block_indicators),
        single_quoted_allowed: !(break_space || space_break),
        block_allowed: !(trailing_space || space_break),
    }
}

/// Whether eight ASCII bytes hold a `:`, `#` or line feed: a byte XOR the character is zero
/// exactly when adding 0x7F leaves its high bit clear (ASCII bytes never carry out).
fn has_colon_hash_or_break(chunk: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW: u64 = ONES * 0x7F;
    let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
    let zero = |c: u8| !((x ^ (ONES * u64::from(c))) + LOW);
    (zero(b':') | zero(b'#') | zero(b'\n')) & (ONES * 0x80) != 0
}

/// Width in bytes of the UTF-8 sequence starting with `lead`.
pub(super) fn width(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

pub(super) fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

pub(super) fn is_blank(b: &[u8], i: usize) -> bool {
    matches!(at(b, i), b' ' | b'\t')
}

/// `\r`, `\n`, NEL (U+0085), LS (U+2028), PS (U+2029).
pub(super) fn is_break(b: &[u8], i: usize) -> bool {
    match at(b, i) {
        b'\r' | b'\n' => true,
        0xC2 => at(b, i + 1) == 0x85,
        0xE2 => at(b, i + 1) == 0x80 && matches!(at(b, i + 2), 0xA8 | 0xA9),
        _ => false,
    }
}

pub(super) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// libyaml's printable set: LF, 0x20-0x7E, and BMP characters from U+00A0 except surrogates,
/// the BOM and U+FFFE/U+FFFF. Tab, CR, other controls and 4-byte characters are not.
pub(super) fn is_printable(b: &[u8], i: usize) -> bool {
    let (c0, c1, c2) = (at(b, i), at(b, i + 1), at(b, i + 2));
    match c0 {
        0x0A | 0x20..=0x7E => true,
        0xC2 => c1 >= 0xA0,
        0xC3..=0xEC | 0xEE => true,
        0xED => c1 < 0xA0,
        0xEF => !((c1 == 0xBB && c2 == 0xBF) || (c1 == 0xBF && matches!(c2, 0xBE | 0xBF))),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain_ok(s: &str) -> bool {
        analyze(s).block_plain_allowed
    }

    #[test]
    fn indicators_forbid_plain() {
        for quoted in ["*", "- a", "-", ": a", "a: b", "x #y", "'a", "@x", "`x", "---", "...x", "? x"] {
            assert!(!plain_ok(quoted), "{quoted:?}");
        }
        for plain in ["-a", "a:b", "a#b", "x# y", "1.16.2", "ünï", "http://x:80/y", "?x"] {
            assert!(plain_ok(plain), "{plain:?}");
        }
    }

    #[test]
    fn edges_and_specials_forbid_plain_and_blocks() {
        assert!(!plain_ok(" leading"));
        assert!(!plain_ok("trailing "));
        let tab = analyze("a\tb");
        assert!(!tab.single_quoted_allowed && !tab.block_allowed, "tab is not printable");
        assert!(!analyze("emoji 😀").single_quoted_allowed, "4-byte characters are special");
        assert!(!analyze("line \nnext").block_allowed, "space before a break");
        assert!(analyze("line\n next").block_allowed, "break before a space is fine in a block");
        assert!(!analyze("line\n next").single_quoted_allowed);
        assert!(!analyze("text\n").block_plain_allowed);
        assert!(analyze("").block_plain_allowed && !analyze("").block_allowed);
    }

    /// Every string of 1 to `max_len` characters over `alphabet`, checked by `check`; how many.
    fn every_string(alphabet: &[u8], max_len: usize, check: &mut dyn FnMut(&[u8])) -> usize {
        let mut checked = 0;
        for len in 1..=max_len {
            for mut n in 0..alphabet.len().pow(len as u32) {
                let mut s = Vec::with_capacity(len);
                for _ in 0..len {
                    s.push(alphabet[n % alphabet.len()]);
                    n /= alphabet.len();
                }
                check(&s);
                checked += 1;
            }
        }
        checked
    }

    /// The eight-bytes-at-a-time classes equal the byte-by-byte definitions.
    #[test]
    fn shape_equals_bytewise_classes() {
        let bytewise = |b: &[u8]| Shape {
            visible: b.iter().all(|c| (0x21..=0x7E).contains(c)),
            text: b.iter().all(|c| (0x20..=0x7E).contains(c) || *c == b'\n'),
            ascii: b.is_ascii(),
        };
        let interesting = [0x00, 0x09, 0x0A, 0x0B, 0x1F, 0x20, 0x21, 0x41, 0x7E, 0x7F, 0x80, 0x8A, 0xA0, 0xC2, 0xFF];
        for len in 0..=17 {
            for (n, &odd) in interesting.iter().enumerate() {
                for at in 0..len {
                    let mut s = vec![b'x'; len];
                    s[at] = odd;
                    assert_eq!(shape(&s), bytewise(&s), "{s:?}");
                    s[(at + n) % len] = b' ';
                    assert_eq!(shape(&s), bytewise(&s), "{s:?}");
                    s[(at + 2 * n + 1) % len] = 0xFF;
                    assert_eq!(shape(&s), bytewise(&s), "{s:?}");
                }
            }
            let s = vec![b'~'; len];
            assert_eq!(shape(&s), bytewise(&s));
        }
    }

    /// The printable-ASCII shortcut must agree with the full analysis.
    #[test]
    fn visible_ascii_shortcut_equals_full_analysis() {
        let checked = every_string(b"a-:#?.*'\"|%@`!&,[]{}>1_", 4, &mut |s| {
            assert_eq!(analyze_visible_ascii(s), analyze_general(s), "{:?}", String::from_utf8_lossy(s));
        });
        assert!(checked > 250_000);
    }

    /// Long ASCII texts (eight-byte chunks skipped or not) agree with the full analysis.
    #[test]
    fn long_ascii_text_equals_full_analysis() {
        let alphabet = b" \na-:#?.*'|%>bcdefgh";
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        for _ in 0..200_000 {
            let len = 1 + next(40);
            let s: Vec<u8> = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
            let a = analyze(std::str::from_utf8(&s).unwrap_or(""));
            assert_eq!(a, analyze_general(&s), "{:?}", String::from_utf8_lossy(&s));
        }
    }

    /// The ASCII-text shortcut must agree with the full analysis, spaces and breaks included.
    #[test]
    fn ascii_text_shortcut_equals_full_analysis() {
        let checked = every_string(b" \na-:#?.*'|%>", 5, &mut |s| {
            assert_eq!(analyze_ascii_text(s), analyze_general(s), "{:?}", String::from_utf8_lossy(s));
        });
        assert!(checked > 350_000);
    }
}
