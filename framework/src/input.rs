//! Reading a user's file with a bound on its size, so that `/dev/zero`, a
//! stream that never ends or a file of gigabytes is refused at once rather
//! than filling memory; and without waiting for a writer that may never
//! come, so that a named pipe no program writes to is refused at once
//! rather than hanging the command.

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
    let (file, pipe) = open(path)?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if pipe && bytes.is_empty() {
        return Err(io::Error::other(
            "an empty pipe that no program writes to (vcsim reads a pipe once and does not wait for a writer)",
        ));
    }
    if bytes.len() as u64 > max {
        return Err(io::Error::other(format!(
            "larger than {} MB, the most vcsim reads of such a file",
            max >> 20
        )));
    }
    Ok(bytes)
}

/// The file opened to read, and whether it is a pipe. Opening a pipe waits
/// for a writer, forever if none comes: it is opened without waiting, then
/// read with waiting, which reads what a writer already there writes
/// (`vcsim run <(sed ...)`) and ends at once if there is none.
#[cfg(unix)]
fn open(path: &Path) -> io::Result<(std::fs::File, bool)> {
    use rustix::fs::{fcntl_getfl, fcntl_setfl, Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    fcntl_setfl(&fd, fcntl_getfl(&fd)? - OFlags::NONBLOCK)?;
    let file = std::fs::File::from(fd);
    let pipe = std::os::unix::fs::FileTypeExt::is_fifo(&file.metadata()?.file_type());
    Ok((file, pipe))
}

#[cfg(not(unix))]
fn open(path: &Path) -> io::Result<(std::fs::File, bool)> {
    Ok((std::fs::File::open(path)?, false))
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

    #[cfg(unix)]
    #[test]
    fn a_pipe_no_program_writes_to_is_refused_at_once() {
        let dir = std::env::temp_dir().join(format!("vcsim-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("scenario.toml");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let e = read_bounded(&fifo, 1 << 20).unwrap_err();
        assert_eq!(
            e.to_string(),
            "an empty pipe that no program writes to (vcsim reads a pipe once and does not wait for a writer)"
        );
        std::fs::remove_dir_all(&dir).unwrap();
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
