//! Attacks on pools and their side tables from safe code: hostile save data whose layout would
//! make the next insert allocate past the reader's limit, callbacks that panic or reach other
//! pools in the middle of an operation, and views held across everything `&self` allows. Each
//! test says what must hold.

#[cfg(feature = "serde")]
mod hostile_layout {
    use arena_kit_core::pool::{Pool, PoolSeed};
    use serde::de::DeserializeSeed;

    /// An empty growable pool's save data with chunks of `chunk` slots.
    fn empty_with_chunk(chunk: u64) -> String {
        format!(
            r#"{{"generation_tag":0,"first_generation":0,"chunk":{chunk},"capacity":0,
            "slots":[],"free_list":[],"peak_live":0,"inserts":0}}"#
        )
    }

    fn load(json: &str, max_bytes: usize) -> Result<Pool<u8>, String> {
        let mut de = serde_json::Deserializer::from_str(json);
        PoolSeed::<u8>::with_max_bytes(max_bytes)
            .deserialize(&mut de)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn an_empty_pool_whose_first_chunk_is_over_the_limit_is_refused() {
        // Loading it allocates nothing, but its first insert would allocate a whole chunk:
        // 4 Mi slots (32 MiB) against a 1 MiB limit, or 2^31 slots (16 GiB) against the
        // default. The limit bounds what the loaded pool allocates for its first value too.
        for (chunk, limit) in [(1u64 << 22, 1usize << 20), (1 << 31, 64 << 20)] {
            match load(&empty_with_chunk(chunk), limit) {
                Ok(pool) => panic!(
                    "accepted: its first insert would take {} slots, over {limit} bytes",
                    pool.stats().capacity.max(chunk as usize)
                ),
                Err(e) => assert!(e.contains("over the limit"), "{e}"),
            }
        }
    }

    #[test]
    fn an_empty_pool_whose_first_chunk_fits_still_loads_and_grows() {
        let mut pool = load(&empty_with_chunk(64), 1 << 20).expect("a small chunk loads");
        assert_eq!(pool.capacity(), 0);
        let h = pool.insert(7);
        assert_eq!((pool.capacity(), pool[h]), (64, 7));
    }

    #[test]
    fn a_saved_pool_shrunk_to_nothing_reads_back() {
        let mut pool: Pool<u8> = Pool::growable(16);
        pool.shrink_to_fit();
        let json = serde_json::to_string(&pool).unwrap();
        let back: Pool<u8> = serde_json::from_str(&json).unwrap();
        assert_eq!((back.capacity(), back.len()), (0, 0));
    }
}
