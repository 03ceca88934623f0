//! Token counts with a real BPE (`o200k_base`, compiled in, no network). Loading its tables costs
//! ~0.2 s, so `warm_up` starts that on a thread of its own at start; until it is ready, counts
//! fall back to a calibrated estimate rather than wait.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();

fn bpe() -> Option<&'static CoreBPE> {
    BPE.get_or_init(|| tiktoken_rs::o200k_base().ok()).as_ref()
}

/// Loads the tokenizer off the calling thread.
pub fn warm_up() {
    if BPE.get().is_none() {
        std::thread::spawn(|| {
            bpe();
        });
    }
}

/// Tokens in `text`: exact for OpenAI's current models, within ~10–20% for others.
pub fn count(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    match BPE.get() {
        Some(Some(bpe)) => bpe.encode_ordinary(text).len() as u64,
        // Not loaded yet (or unavailable): about four characters per token.
        _ => (text.len() as u64).div_ceil(4),
    }
}

/// Like `count`, but loads the tokenizer first when needed (tests, benchmarks, tools).
pub fn count_exact(text: &str) -> u64 {
    bpe();
    count(text)
}
