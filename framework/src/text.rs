//! Text from users' files shown to people: control characters escaped as
//! Rust writes them (`\u{1b}`, `\r`), and Unicode's invisible format
//! characters (bidirectional overrides, zero-width characters) as `\u{202e}`,
//! so that a name, a script's message or its thrown text can neither drive
//! the terminal nor show other text than it holds (nor break an XML file:
//! most control characters are not allowed in XML 1.0, not even as
//! references). One rule for the terminal, CSV files and SVG plots.

/// `s` with every control and invisible character escaped.
pub fn escape_controls(s: &str) -> String {
    escape(s, false)
}

/// [`escape_controls`], but line breaks kept (a message of several lines).
pub fn escape_controls_but_newlines(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, keep_newlines: bool) -> String {
    let escaped = |c: char| (c.is_control() || invisible(c)) && !(keep_newlines && c == '\n');
    if !s.chars().any(escaped) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escaped(c) {
            if c.is_control() {
                out.extend(c.escape_debug());
            } else {
                out.extend(c.escape_unicode());
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Unicode's invisible format characters that reorder or hide text on a
/// terminal (bidirectional overrides and isolates, zero-width characters).
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{061C}' | '\u{00AD}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2028}' | '\u{2029}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}'
        | '\u{FEFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_invisible_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(
            escape_controls("red\u{1b}[31m\u{7}"),
            "red\\u{1b}[31m\\u{7}"
        );
        assert_eq!(escape_controls("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(escape_controls("two\nlines\r"), "two\\nlines\\r");
        assert_eq!(
            escape_controls_but_newlines("two\nlines\r"),
            "two\nlines\\r"
        );
        assert_eq!(escape_controls("plain é ü — ok"), "plain é ü — ok");
    }
}
