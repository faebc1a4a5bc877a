//! The answers: what a decision becomes for the client (status, headers, JSON body), and what
//! is logged and counted of it.

pub mod answer;
pub mod observe;
