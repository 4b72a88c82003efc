//! Reading a user's file with a bound on its size, so that `/dev/zero`, a
//! stream that never ends or a file of gigabytes is refused at once rather
//! than filling memory.

use std::io::{self, Read};
use std::path::Path;

/// The most bytes read of a scenario, sweep, search space or script.
pub const MAX_TEXT_BYTES: u64 = 16 << 20;
/// The most bytes read of a BOINC file (a client_state.xml of a host with
/// thousands of tasks is tens of MB).
pub const MAX_IMPORT_BYTES: u64 = 256 << 20;
/// The most bytes read of a shard's results or trail when merging (a
/// million runs, a process's most, of about 200 bytes each).
pub const MAX_RESULTS_BYTES: u64 = 1 << 30;

/// The file's bytes, or an error if it holds more than `max` (the message
/// says the bound; callers prefix the path).
pub fn read_bounded(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::other(format!(
            "larger than {} MB, the most vcsim reads of such a file",
            max >> 20
        )));
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_text(path: &Path, max: u64) -> io::Result<String> {
    String::from_utf8(read_bounded(path, max)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.utf8_error()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_stream_is_refused_after_the_bound() {
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(
            e.to_string(),
            "larger than 1 MB, the most vcsim reads of such a file"
        );
    }

    #[test]
    fn a_file_within_the_bound_is_read_whole() {
        let p = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"));
        let text = read_text(p, MAX_TEXT_BYTES).unwrap();
        assert!(text.starts_with("[package]"), "{text}");
        let n = text.len() as u64;
        assert_eq!(read_text(p, n).unwrap(), text);
        assert!(read_text(p, n - 1).is_err());
    }
}
