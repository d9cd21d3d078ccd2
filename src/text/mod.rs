//! Pure text below every layer that shows a value: numbers as people read them, text
//! tables, the contract's words (every status, run kind and `--only` word, spelt once) and
//! the kinds of value a model's column holds.

pub mod kinds;
pub mod numbers;
pub mod table;
pub mod words;
