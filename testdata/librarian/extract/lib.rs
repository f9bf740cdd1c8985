use std::collections::HashMap;
use crate::util::{parse, Config};

/// A counter of words.
#[derive(Debug, Default)]
pub struct Counter {
    counts: HashMap<String, usize>,
}

pub trait Count {
    fn add(&mut self, word: &str);
    fn total(&self) -> usize {
        0
    }
}

impl Count for Counter {
    fn add(&mut self, word: &str) {
        *self.counts.entry(word.to_string()).or_insert(0) += 1;
    }
}

pub enum Mode {
    Fast,
    Slow,
}

pub type Counts = HashMap<String, usize>;

mod inner {
    pub fn helper() -> u32 {
        super::compute(2)
    }
}

fn compute(x: u32) -> u32 {
    parse(x)
}
