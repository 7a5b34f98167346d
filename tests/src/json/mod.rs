//! Support for the JSON encoder's tests and benchmark: arrays of every type, random batches,
//! and comparing parsed JSON.

pub mod arrays;
pub mod random;
pub mod same;
