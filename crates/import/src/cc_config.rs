//! The client's `cc_config.xml`: of its `<options>`, vcsim models
//! `<rec_half_life_days>` (the half-life of recent estimated credit, which
//! today's client ranks projects by); the other options are listed as not
//! modelled.

use crate::emit::{show, Section, Val};
use crate::error::ImportError;
use crate::prefs::Pref;
use crate::xml::{elems, tag, Src, Unmodelled};
use vcsim_framework::scenario::bounds::MAX_SPAN_DAYS;

/// What vcsim reads from a `cc_config.xml`.
#[derive(Default, Clone)]
pub struct CcConfig {
    pub rec_half_life_days: Option<Pref>,
}

const USED_OPTIONS: &[&str] = &["rec_half_life_days"];

/// Reads a `cc_config.xml`. As in BOINC, the last `<rec_half_life_days>`
/// wins; unlike BOINC, which silently falls back to 10 days, a value that is
/// not a positive number is an error.
pub fn read(src: &Src, un: &mut Unmodelled) -> Result<CcConfig, ImportError> {
    let doc = src.document()?;
    let root = doc.root_element();
    if tag(root) != "cc_config" {
        return Err(src.err(
            root,
            format!(
                "expected <cc_config> as the root element, found <{}>",
                tag(root)
            ),
        ));
    }
    let mut cfg = CcConfig::default();
    // The lines of each <rec_half_life_days>, in every <options>: a repeat is warned.
    let mut lines = Vec::new();
    for opts in elems(root).filter(|n| tag(*n) == "options") {
        for n in elems(opts) {
            if tag(n) == "rec_half_life_days" {
                lines.push(src.line(n));
                let v = src.num(n)?;
                if v <= 0.0 {
                    return Err(src.err(
                        n,
                        format!(
                            "must be a positive number of days, found {} (BOINC would use its default, 10 days)",
                            show(v)
                        ),
                    ));
                }
                if v > MAX_SPAN_DAYS {
                    return Err(src.err(
                        n,
                        format!("must be at most {MAX_SPAN_DAYS:e} days, found {}", show(v)),
                    ));
                }
                cfg.rec_half_life_days = Some(Pref {
                    value: v,
                    from: src.at(n),
                });
            }
        }
        un.rest(src, "options", opts, USED_OPTIONS);
    }
    if let (Some(&first), Some(&last)) = (lines.first(), lines.last()) {
        if lines.len() > 1 {
            src.repeated("<options>", "rec_half_life_days", lines.len(), first, last);
        }
    }
    // `<log_flags>` only choose what the client logs.
    un.rest(src, "cc_config", root, &["options", "log_flags"]);
    Ok(cfg)
}

/// Adds `rec_half_life_days` to the `[client]` table when the file gives it;
/// otherwise the scenario's default (BOINC's, 10 days) applies.
pub fn put(cfg: &CcConfig, client: &mut Section) {
    if let Some(p) = &cfg.rec_half_life_days {
        client.put("rec_half_life_days", Val::F(p.value), p.from.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn read_text(text: &str) -> Result<CcConfig, ImportError> {
        let src = Src::parse(Path::new("cc_config.xml"), text)?;
        read(&src, &mut Unmodelled::default())
    }

    #[test]
    fn the_last_value_wins_and_others_are_listed() {
        let text = "<cc_config>\n<log_flags><sched_op_debug/></log_flags>\n<options>\n<rec_half_life_days>3</rec_half_life_days>\n<ncpus>4</ncpus>\n</options>\n<options><rec_half_life_days>2.5</rec_half_life_days></options>\n</cc_config>\n";
        let src = Src::parse(Path::new("cc_config.xml"), text).unwrap();
        let mut un = Unmodelled::default();
        let c = read(&src, &mut un).unwrap();
        let p = c.rec_half_life_days.unwrap();
        assert_eq!(p.value, 2.5);
        assert_eq!(p.from, "<rec_half_life_days>, cc_config.xml line 7");
        assert_eq!(
            src.repeat_warnings(),
            vec!["cc_config.xml: <options> has <rec_half_life_days> twice (lines 4 and 7): the last, at line 7, is used, as BOINC's parser does".to_string()]
        );
        assert_eq!(
            un.warnings(),
            vec!["cc_config.xml: <options>: not modelled by vcsim, ignored: <ncpus>".to_string()]
        );
    }

    #[test]
    fn bad_values_and_roots_are_errors() {
        for (v, msg) in [
            ("0", "must be a positive number of days, found 0"),
            ("-1", "must be a positive number of days, found -1"),
            ("abc", "`abc` is not a finite number"),
            ("inf", "`inf` is not a finite number"),
            ("", "`` is not a finite number"),
            ("1e8", "must be at most 1e7 days"),
        ] {
            let text = format!(
                "<cc_config>\n<options>\n<rec_half_life_days>{v}</rec_half_life_days>\n</options>\n</cc_config>\n"
            );
            let e = read_text(&text).err().expect("an error");
            assert_eq!(e.line, Some(3), "{e}");
            assert_eq!(e.element.as_deref(), Some("rec_half_life_days"), "{e}");
            assert!(e.message.contains(msg), "{e}");
        }
        let e = read_text("<global_preferences/>").err().expect("an error");
        assert!(e.message.contains("expected <cc_config>"), "{e}");
        assert!(read_text("<cc_config/>")
            .unwrap()
            .rec_half_life_days
            .is_none());
    }
}
