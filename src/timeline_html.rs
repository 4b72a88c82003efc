//! The timeline as a self-contained HTML page (issue 4).

use vcsim_framework::{timeline::Timeline, RunReport};

/// A minimal page: the timeline's data; the drawn lanes come with issue 4.
pub fn render(tl: &Timeline, r: &RunReport) -> String {
    let data = serde_json::to_string(tl).expect("plain data");
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>vcsim timeline: {} · {}</title></head><body><pre id=\"data\">{}</pre></body></html>\n",
        r.scenario, r.policy, data
    )
}
