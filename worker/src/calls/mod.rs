//! The isolate's calls to the Durable Objects: the client with its timeouts, one exchange
//! in flight per key, the queue in front of a key's object, the blocked-key cache.

pub mod block_cache;
pub mod do_client;
pub mod flight;
pub mod key_queue;
