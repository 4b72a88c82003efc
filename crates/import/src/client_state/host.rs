//! `<host_info>`: CPUs, speed, disk and coprocessors; and the `[host]` and
//! `[[host.gpu]]` tables made from it.

use crate::emit::{num, Section, Val};
use crate::error::ImportError;
use crate::xml::{elems, tag, unread, Located, Src, Unmodelled};
use roxmltree::Node;
/// `<host_info>`.
#[derive(Debug, Clone, PartialEq)]
pub struct HostInfo<'a> {
    pub line: usize,
    pub ncpus: Located<u32>,
    pub cpu_flops: Located<f64>,
    pub d_total: Option<Located<f64>>,
    pub d_free: Option<Located<f64>>,
    /// `<m_nbytes>`: memory, which vcsim does not model.
    pub memory_bytes: Option<f64>,
    pub coprocs: Vec<Coproc<'a>>,
    /// Children of `<coprocs>` that are not coprocessors.
    pub other_coprocs: Vec<&'a str>,
    pub unread: Vec<&'a str>,
}

/// A coprocessor of `<coprocs>`: `<coproc_cuda>`, ..., or `<coproc>` with a `<type>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Coproc<'a> {
    pub tag: &'a str,
    /// vcsim's kind: `nvidia`, `amd`, `intel`, `apple`, or the type in lower case.
    pub kind: String,
    pub count: u32,
    pub peak_flops: Option<f64>,
    pub line: usize,
    pub unread: Vec<&'a str>,
}

/// vcsim's name for a BOINC coprocessor type.
pub fn gpu_kind(t: &str) -> String {
    match t.to_ascii_lowercase().as_str() {
        "cuda" | "nvidia" | "coproc_cuda" => "nvidia".into(),
        "ati" | "amd" | "cal" | "coproc_ati" => "amd".into(),
        "intel_gpu" | "intel" | "coproc_intel_gpu" => "intel".into(),
        "apple_gpu" | "coproc_apple_gpu" => "apple".into(),
        other => other.to_string(),
    }
}

impl<'a> HostInfo<'a> {
    pub fn parse(src: &Src<'a>, n: Node<'_, 'a>) -> Result<HostInfo<'a>, ImportError> {
        let ncpus = src
            .opt(n, "p_ncpus", |s, c| s.whole(c, 1))?
            .ok_or_else(|| src.err(n, "no <p_ncpus> (the number of CPUs)"))?;
        let cpu_flops = src
            .opt(n, "p_fpops", Src::device_flops)?
            .ok_or_else(|| src.err(n, "no <p_fpops> (FLOPS per CPU)"))?;
        let d_total = src.opt(n, "d_total", Src::disk_total)?;
        let d_free = src.opt(n, "d_free", Src::bytes)?;
        let memory_bytes = src.opt(n, "m_nbytes", Src::bytes)?.map(|m| m.value);
        let mut coprocs = Vec::new();
        let mut other_coprocs = Vec::new();
        if let Some(cp) = src.last(n, "coprocs") {
            for c in elems(cp) {
                match Coproc::parse(src, c)? {
                    Some(g) => coprocs.push(g),
                    None => other_coprocs.push(tag(c)),
                }
            }
        }
        Ok(HostInfo {
            line: src.line(n),
            ncpus,
            cpu_flops,
            d_total,
            d_free,
            memory_bytes,
            coprocs,
            other_coprocs,
            unread: unread(
                n,
                &[
                    "p_ncpus", "p_fpops", "d_total", "d_free", "m_nbytes", "coprocs",
                ],
            ),
        })
    }
}

impl<'a> Coproc<'a> {
    /// None if `c` is not a coprocessor element.
    pub fn parse(src: &Src<'a>, c: Node<'_, 'a>) -> Result<Option<Coproc<'a>>, ImportError> {
        let t = tag(c);
        let kind = match t {
            "coproc_cuda" | "coproc_ati" | "coproc_intel_gpu" | "coproc_apple_gpu" => gpu_kind(t),
            "coproc" => match src.last(c, "type") {
                Some(ty) => gpu_kind(&src.text(ty)),
                None => return Err(src.err(c, "a <coproc> needs a <type>")),
            },
            _ => return Ok(None),
        };
        let count = match src.last(c, "count") {
            Some(n) => src.whole(n, 0)?,
            None => 1,
        };
        let peak_flops = src
            .opt(c, "peak_flops", Src::device_flops)?
            .map(|p| p.value);
        Ok(Some(Coproc {
            tag: t,
            kind,
            count,
            peak_flops,
            line: src.line(c),
            unread: unread(c, &["type", "count", "peak_flops"]),
        }))
    }
}

/// The host's GPUs, one per kind: coprocessors with count 0 and second ones
/// of a kind are left out, with warnings.
pub fn gpus<'h, 'a>(
    src: &Src,
    hi: &'h HostInfo<'a>,
    un: &mut Unmodelled,
    warnings: &mut Vec<String>,
) -> Vec<&'h Coproc<'a>> {
    let mut out: Vec<&Coproc> = Vec::new();
    let mut kinds = std::collections::HashSet::new();
    for g in &hi.coprocs {
        un.add_all(src, g.tag, &g.unread);
        if g.count == 0 {
            warnings.push(format!(
                "{}: <{}> line {} has <count>0</count>: left out",
                src.name(),
                g.tag,
                g.line
            ));
            continue;
        }
        if !kinds.insert(g.kind.as_str()) {
            warnings.push(format!(
                "{}: a second `{}` coprocessor at line {}: left out (vcsim has one entry per kind)",
                src.name(),
                g.kind,
                g.line
            ));
            continue;
        }
        out.push(g);
    }
    for t in &hi.other_coprocs {
        un.add(src, "coprocs", t);
    }
    out
}

/// Where a GPU was read, for comments.
pub fn gpu_from(src: &Src, g: &Coproc) -> String {
    format!("<{}>, {} line {}", g.tag, src.name(), g.line)
}

/// `[[host.gpu]]` tables; a GPU without `<peak_flops>` is an error.
pub fn gpu_sections(src: &Src, gpus: &[&Coproc]) -> Result<Vec<Section>, ImportError> {
    let mut secs = Vec::new();
    for g in gpus {
        let from = gpu_from(src, g);
        let Some(flops) = g.peak_flops else {
            return Err(src.err_at(
                g.line,
                g.tag,
                format!(
                    "the `{}` coprocessor has no <peak_flops> (its FLOPS per instance)",
                    g.kind
                ),
            ));
        };
        let mut s = Section::new("[[host.gpu]]");
        s.put("kind", Val::S(g.kind.clone()), from.clone());
        s.put("count", Val::I(g.count as u64), "<count>");
        s.put("flops", Val::F(flops), format!("<peak_flops> of {from}"));
        secs.push(s);
    }
    Ok(secs)
}

/// The `[host]` table. `boinc_bytes`: the sizes of BOINC's files.
pub fn host_section(src: &Src, hi: &HostInfo, boinc_bytes: f64) -> Section {
    let mut host = Section::new("[host]");
    host.put("ncpus", Val::I(hi.ncpus.value as u64), src.at_l(&hi.ncpus));
    host.put(
        "cpu_flops",
        Val::F(hi.cpu_flops.value),
        src.at_l(&hi.cpu_flops),
    );
    // A <d_total> is at least a byte: see `Src::disk_total`.
    match &hi.d_total {
        Some(t) => {
            host.put(
                "disk_gb",
                Val::F(t.value / 1e9),
                format!("{} / 1e9", src.at_l(t)),
            );
            if let Some(f) = &hi.d_free {
                let other = t.value - f.value - boinc_bytes;
                let below = if other < 0.0 { ", below 0: 0" } else { "" };
                host.put(
                    "non_boinc_used_gb",
                    Val::F(other.max(0.0) / 1e9),
                    format!(
                        "(<d_total> - {} - {} GB of BOINC's files) / 1e9{below}",
                        src.at_l(f),
                        num(boinc_bytes / 1e9)
                    ),
                );
            }
        }
        None => {
            host.put("disk_gb", Val::F(100.0), "no <d_total>: vcsim's default");
        }
    }
    host.put(
        "connection_interval_days",
        Val::F(0.0),
        "always connected (see the warnings on <connected_frac>)",
    );
    host
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::with_root;

    #[test]
    fn host_info_with_coprocessors() {
        let h = with_root(
            "<host_info>\n<p_ncpus>4</p_ncpus>\n<p_fpops>2e9</p_fpops>\n<d_total>1e11</d_total>\
             <m_nbytes>8e9</m_nbytes><os_name>x</os_name>\n<coprocs>\n\
             <coproc_cuda><count>2</count><peak_flops>5e12</peak_flops><name>g</name></coproc_cuda>\n\
             <coproc><type>ATI</type></coproc><other/></coprocs></host_info>",
            |s, n| HostInfo::parse(s, n).unwrap(),
        );
        assert_eq!(
            h.ncpus,
            Located {
                value: 4,
                tag: "p_ncpus",
                line: 2
            }
        );
        assert_eq!(h.cpu_flops.value, 2e9);
        assert_eq!(h.d_total.map(|d| d.value), Some(1e11));
        assert_eq!(h.d_free, None);
        assert_eq!(h.memory_bytes, Some(8e9));
        assert_eq!(h.unread, vec!["os_name"]);
        assert_eq!(h.other_coprocs, vec!["other"]);
        assert_eq!(h.coprocs.len(), 2);
        let g = &h.coprocs[0];
        assert_eq!(
            (g.tag, g.kind.as_str(), g.count, g.peak_flops, g.line),
            ("coproc_cuda", "nvidia", 2, Some(5e12), 6)
        );
        assert_eq!(g.unread, vec!["name"]);
        let a = &h.coprocs[1];
        assert_eq!((a.kind.as_str(), a.count, a.peak_flops), ("amd", 1, None));
    }

    #[test]
    fn host_info_errors() {
        let e = with_root("<host_info><p_fpops>1e9</p_fpops></host_info>", |s, n| {
            HostInfo::parse(s, n).unwrap_err()
        });
        assert_eq!(e.element.as_deref(), Some("host_info"));
        assert!(e.message.contains("<p_ncpus>"), "{e}");
        let e = with_root(
            "<host_info><p_ncpus>1</p_ncpus><p_fpops>1e9</p_fpops><coprocs><coproc/></coprocs></host_info>",
            |s, n| HostInfo::parse(s, n).unwrap_err(),
        );
        assert_eq!(e.element.as_deref(), Some("coproc"));
        let e = with_root("<host_info><p_ncpus>1.5</p_ncpus></host_info>", |s, n| {
            HostInfo::parse(s, n).unwrap_err()
        });
        assert_eq!(e.element.as_deref(), Some("p_ncpus"));
    }

    #[test]
    fn kinds() {
        assert_eq!(gpu_kind("CUDA"), "nvidia");
        assert_eq!(gpu_kind("coproc_ati"), "amd");
        assert_eq!(gpu_kind("intel_gpu"), "intel");
        assert_eq!(gpu_kind("Apple_GPU"), "apple");
        assert_eq!(gpu_kind("Other"), "other");
    }
}
