//! A pool object's memory and its SQLite table.
//!
//! ```sql
//! pool (id = 0, name TEXT, bytes BLOB, deadline INTEGER, sent INTEGER NULL)
//! ```
//! `bytes` is `LeasePool::encode()`; `name` the pool's name, so the alarm (which has no
//! request) can find the pool's configuration; `deadline` the real time (Unix ms) the next
//! lease lapses; `sent` the instant (ms) the last write was decided at when the request
//! brought its own clock (`Clock::sent`: the test build's request clock), NULL on the object's; the column is the test build's only (feature `test-hooks`): a
//! production build neither creates, reads nor writes it (a table that has it keeps it NULL).
//! The row is deleted when no lease is left. Reads and writes use
//! the synchronous SQL API, so no request can interleave between a read and its write.

use tollgate::lease::LeasePool;
use tollgate::Nanos;
use worker::{SqlStorage, SqlStorageValue};

use super::storage::{real_deadline, sql_err};
use crate::base::errors::ApiError;
use crate::config::settings::Config;

/// The pool this object holds, once loaded.
#[derive(Debug)]
pub struct Loaded {
    /// The pool's name.
    pub name: String,
    /// The leases (the core's state machine).
    pub pool: LeasePool,
    /// The instant the last write was decided at when the request brought its own clock
    /// (`Clock::sent`), `None` on the object's. The alarm cannot know a request's clock: it then
    /// takes this instant as the pool's time, never later, so it can never take away a lease
    /// the next request on that clock still sees as live.
    pub sent: Option<Nanos>,
}

/// What the object keeps in memory.
#[derive(Debug, Default)]
pub struct PoolMem {
    /// Whether the table exists (created on first use after start or `deleteAll`).
    pub schema: bool,
    /// The pool, when loaded.
    pub loaded: Option<Loaded>,
    /// The alarm this object set, if it knows of one.
    pub alarm_at: Option<u64>,
}

impl PoolMem {
    /// Forgets everything (after the alarm found the pool empty).
    pub fn clear(&mut self) {
        *self = PoolMem::default();
    }
}

fn ensure_schema(mem: &mut PoolMem, sql: &SqlStorage) -> Result<(), ApiError> {
    if !mem.schema {
        sql.exec(SCHEMA, None).map_err(sql_err)?;
        mem.schema = true;
    }
    Ok(())
}

#[cfg(feature = "test-hooks")]
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS pool (id INTEGER PRIMARY KEY CHECK (id = 0), name TEXT NOT NULL, \
     bytes BLOB NOT NULL, deadline INTEGER NOT NULL, sent INTEGER)";
#[cfg(not(feature = "test-hooks"))]
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS pool (id INTEGER PRIMARY KEY CHECK (id = 0), name TEXT NOT NULL, \
     bytes BLOB NOT NULL, deadline INTEGER NOT NULL)";

#[cfg(feature = "test-hooks")]
const READ: &str = "SELECT name, bytes, sent FROM pool WHERE id = 0";
#[cfg(not(feature = "test-hooks"))]
const READ: &str = "SELECT name, bytes FROM pool WHERE id = 0";

/// The stored row: name, bytes, sent (`None` on the object's clock, and always in a
/// production build).
type Row = (String, Vec<u8>, Option<Nanos>);

fn read_row(sql: &SqlStorage) -> Result<Option<Row>, ApiError> {
    let row = sql.exec(READ, None).map_err(sql_err)?.raw().next();
    let Some(row) = row.transpose().map_err(sql_err)? else { return Ok(None) };
    let mut cols = row.into_iter();
    match (cols.next(), cols.next(), cols.next()) {
        (
            Some(SqlStorageValue::String(name)),
            Some(SqlStorageValue::Blob(bytes)),
            Some(SqlStorageValue::Integer(t)),
        ) => Ok(Some((name, bytes, Some(Nanos::from_millis(t.max(0) as u64))))),
        (
            Some(SqlStorageValue::String(name)),
            Some(SqlStorageValue::Blob(bytes)),
            Some(SqlStorageValue::Null) | None,
        ) => Ok(Some((name, bytes, None))),
        _ => {
            worker::console_warn!("stored pool row has unexpected columns: dropped");
            Ok(None)
        }
    }
}

/// Loads the pool if not loaded. `name` is the pool a request names (its object is
/// `id_from_name(name)`), `None` for the alarm, which takes the stored name. Answers `None`
/// when there is nothing to hold: no row and no name, or a stored pool no longer configured.
/// Stored leases that do not fit the configured pool (its partition count changed) are
/// dropped with a warning: the pool starts empty and holders re-grant.
pub fn load<'m>(
    mem: &'m mut PoolMem,
    sql: &SqlStorage,
    cfg: &Config,
    name: Option<&str>,
) -> Result<Option<&'m mut Loaded>, ApiError> {
    if mem.loaded.is_none() {
        ensure_schema(mem, sql)?;
        let row = read_row(sql)?;
        let Some(pool_name) = name.map(str::to_string).or_else(|| row.as_ref().map(|r| r.0.clone())) else {
            return Ok(None);
        };
        let Some(pc) = cfg.pools.get(&pool_name) else { return Ok(None) };
        let mut pool = pc.pool.clone();
        let mut sent = None;
        if let Some((stored_name, bytes, t)) = row {
            if stored_name != pool_name {
                worker::console_warn!("stored pool {stored_name:?} is not {pool_name:?}: dropped");
            } else if let Err(e) = pool.restore(&bytes) {
                worker::console_warn!("stored leases of pool {pool_name:?} dropped: {e}");
            } else {
                sent = t;
            }
        }
        mem.loaded = Some(Loaded { name: pool_name, pool, sent });
    }
    let loaded = mem.loaded.as_mut().filter(|l| name.is_none_or(|n| n == l.name));
    match loaded {
        Some(l) => Ok(Some(l)),
        None => Err(ApiError::internal("this object holds another pool")),
    }
}

/// The pool's time for the alarm at the real time `real_ms`: the real clock, or, when the
/// last write was on a request's own clock, that instant (see [`Loaded::sent`]).
pub fn alarm_now(real_ms: u64, sent: Option<Nanos>) -> Nanos {
    sent.unwrap_or(Nanos::from_millis(real_ms))
}

/// Writes the pool through as it is at `now` (real time `real_ms`; `sent` when `now` came
/// from the request's own clock): the row, or no row when no lease is left. Returns the real time (ms)
/// the next lease lapses, `None` when the row was deleted.
pub fn save(
    sql: &SqlStorage,
    loaded: &mut Loaded,
    real_ms: u64,
    now: Nanos,
    sent: bool,
) -> Result<Option<u64>, ApiError> {
    let Some(next) = loaded.pool.next_expiry() else {
        sql.exec("DELETE FROM pool", None).map_err(sql_err)?;
        loaded.sent = None;
        return Ok(None);
    };
    let deadline = real_deadline(real_ms, now, next);
    let stored = sent.then_some(now);
    let values = vec![
        SqlStorageValue::String(loaded.name.clone()),
        SqlStorageValue::Blob(loaded.pool.encode()),
        SqlStorageValue::Integer(deadline as i64),
    ];
    #[cfg(feature = "test-hooks")]
    let (write, values) = (
        "INSERT OR REPLACE INTO pool (id, name, bytes, deadline, sent) VALUES (0, ?, ?, ?, ?)",
        [
            values,
            vec![stored.map_or(SqlStorageValue::Null, |t| SqlStorageValue::Integer(t.as_millis_floor() as i64))],
        ]
        .concat(),
    );
    #[cfg(not(feature = "test-hooks"))]
    let write = "INSERT OR REPLACE INTO pool (id, name, bytes, deadline) VALUES (0, ?, ?, ?)";
    sql.exec(write, values).map_err(sql_err)?;
    loaded.sent = stored;
    Ok(Some(deadline))
}

/// How many rows the table holds (0 or 1), for the test-only inspect.
pub fn stored_rows(mem: &mut PoolMem, sql: &SqlStorage) -> Result<u64, ApiError> {
    ensure_schema(mem, sql)?;
    let row =
        sql.exec("SELECT COUNT(*) FROM pool", None).map_err(sql_err)?.raw().next().transpose().map_err(sql_err)?;
    Ok(match row.and_then(|r| r.into_iter().next()) {
        Some(SqlStorageValue::Integer(n)) => n.max(0) as u64,
        _ => 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alarm_never_moves_a_test_clock_forward() {
        assert_eq!(alarm_now(1_000, None), Nanos::from_millis(1_000));
        assert_eq!(alarm_now(1_000, Some(Nanos::from_millis(5))), Nanos::from_millis(5));
        assert_eq!(alarm_now(1_000, Some(Nanos::from_secs(9_000))), Nanos::from_secs(9_000));
    }
}
