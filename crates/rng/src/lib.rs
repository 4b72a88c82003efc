//! Random streams. Every draw of a run comes from the scenario's seed: each
//! consumer gets its own stream, derived from (seed, stream name, index), so
//! adding a draw in one place never shifts the numbers of another. The
//! simulator, the script host and the dylib SDK all derive their streams
//! here, so a stream's name says where its numbers go.

#![forbid(unsafe_code)]

use rand::SeedableRng;
use rand_pcg::Pcg64;

/// The RNG used throughout vcsim.
pub type SimRng = Pcg64;

/// A stream for `name` (and an index, e.g. a project) under `seed`.
pub fn stream(seed: u64, name: &str, index: u64) -> SimRng {
    Pcg64::seed_from_u64(stream_seed(seed, name, index))
}

/// The 64-bit seed of the stream `name`/`index` under `seed`.
pub fn stream_seed(seed: u64, name: &str, index: u64) -> u64 {
    // FNV-1a over the name, then SplitMix64 to spread the bits: stable across
    // platforms and releases, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = seed ^ h.rotate_left(17) ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: u64 = stream(1, "host", 0).gen();
        assert_eq!(a, stream(1, "host", 0).gen::<u64>());
        assert_ne!(a, stream(1, "host", 1).gen::<u64>());
        assert_ne!(a, stream(2, "host", 0).gen::<u64>());
        assert_ne!(a, stream(1, "jobs", 0).gen::<u64>());
    }
}
