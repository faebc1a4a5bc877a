//! The object's memory and its SQLite tables.
//!
//! ```sql
//! state         (id = 0, bytes BLOB, deadline INTEGER)  -- PolicyState::encode(), exact mode
//! central       (id = 0, json TEXT,  deadline INTEGER)  -- merged window counts, sync mode
//! written_under (id = 0, config BLOB)                   -- policy_codec::encode_policy() of
//!                                                       -- the policy `state` was written under
//! quota         (id = 0, bytes BLOB, deadline INTEGER)  -- QuotaLedger::encode(), leased mode
//! ```
//!
//! When the policy's configuration changes (a new deployment, a `wrangler dev` restart), the
//! state is read under the configuration it was written under and converted to the running
//! one by the core (`tollgate::reconfigure`): a key keeps what it used. A state stored before
//! `written_under` existed is read as written under the running configuration
//! (`tollgate::reconfigure::restore`).
//! `deadline` is the real time (Unix ms) from which the row decides like a fresh key; the
//! alarm handler drops everything once every row's deadline has passed. Reads and writes use
//! the synchronous SQL API, so no request can interleave between a read and its write.

use std::collections::BTreeMap;

use tollgate::policy_codec::encode_policy;
use tollgate::reconfigure::restore;
pub use tollgate::reconfigure::Restored as Loaded;
use tollgate::{Nanos, Policy, PolicyState};
use worker::SqlStorageValue;

use super::sql::Sql;

use crate::base::errors::ApiError;

/// Merged counts of one key: `(limit, window start ns)` to `(count, expires at ns)`.
pub type CentralCounts = BTreeMap<(usize, u64), (u64, u64)>;

/// What the object keeps in memory. `None` fields are not loaded yet.
#[derive(Debug, Default)]
pub struct Mem {
    /// Whether the tables exist (created on first use after start or `deleteAll`).
    pub schema: bool,
    /// The exact-mode state (`Some(None)`: loaded, fresh).
    pub exact: Option<Option<PolicyState>>,
    /// The sync-mode merged counts.
    pub central: Option<CentralCounts>,
    /// The alarm this object set, if it knows of one.
    pub alarm_at: Option<u64>,
    /// The configuration `written_under` holds (`None`: not loaded, or no row).
    pub written_under: Option<Vec<u8>>,
}

impl Mem {
    /// Forgets everything (after a reset or an expiry).
    pub fn clear(&mut self) {
        *self = Mem::default();
    }
}

/// A failed statement, as the 500 every object answers for it.
pub fn sql_err(e: worker::Error) -> ApiError {
    ApiError::internal(format!("storage: {e}"))
}

/// Creates the tables once per object start.
pub fn ensure_schema(mem: &mut Mem, sql: &Sql<'_>) -> Result<(), ApiError> {
    if !mem.schema {
        sql.exec(
            "CREATE TABLE IF NOT EXISTS state (id INTEGER PRIMARY KEY CHECK (id = 0), bytes BLOB NOT NULL, deadline INTEGER NOT NULL)",
            None,
        )
        .map_err(sql_err)?;
        sql.exec(
            "CREATE TABLE IF NOT EXISTS central (id INTEGER PRIMARY KEY CHECK (id = 0), json TEXT NOT NULL, deadline INTEGER NOT NULL)",
            None,
        )
        .map_err(sql_err)?;
        sql.exec(
            "CREATE TABLE IF NOT EXISTS quota (id INTEGER PRIMARY KEY CHECK (id = 0), bytes BLOB NOT NULL, deadline INTEGER NOT NULL)",
            None,
        )
        .map_err(sql_err)?;
        sql.exec(
            "CREATE TABLE IF NOT EXISTS written_under (id INTEGER PRIMARY KEY CHECK (id = 0), config BLOB NOT NULL)",
            None,
        )
        .map_err(sql_err)?;
        mem.schema = true;
    }
    Ok(())
}

fn first_row(sql: &Sql<'_>, query: &str) -> Result<Option<Vec<SqlStorageValue>>, ApiError> {
    sql.exec(query, None).map_err(sql_err)?.raw().next().transpose().map_err(sql_err)
}

fn blob(sql: &Sql<'_>, query: &str) -> Result<Option<Vec<u8>>, ApiError> {
    Ok(match first_row(sql, query)?.and_then(|row| row.into_iter().next()) {
        Some(SqlStorageValue::Blob(bytes)) => Some(bytes),
        _ => None,
    })
}

/// Loads the exact-mode state if not loaded, converting a state written under another
/// configuration to `policy` at `now`. Returns what happened (for the log) when it loaded.
pub fn load_exact(mem: &mut Mem, sql: &Sql<'_>, policy: &Policy, now: Nanos) -> Result<Option<Loaded>, ApiError> {
    if mem.exact.is_some() {
        return Ok(None);
    }
    ensure_schema(mem, sql)?;
    mem.written_under = blob(sql, "SELECT config FROM written_under WHERE id = 0")?;
    let (state, loaded) = match blob(sql, "SELECT bytes FROM state WHERE id = 0")? {
        Some(bytes) => restore(&bytes, mem.written_under.as_deref(), policy, now),
        None => (None, Loaded::AsStored),
    };
    mem.exact = Some(state);
    Ok(Some(loaded))
}

/// Writes the exact-mode state through (or deletes it when fresh), and the configuration it
/// is written under when storage holds another.
pub fn save_exact(mem: &mut Mem, sql: &Sql<'_>, policy: &Policy, deadline_ms: u64) -> Result<(), ApiError> {
    let Some(state) = mem.exact.as_ref() else { return Err(ApiError::internal("state not loaded")) };
    match state {
        Some(s) => {
            sql.exec(
                "INSERT OR REPLACE INTO state (id, bytes, deadline) VALUES (0, ?, ?)",
                vec![SqlStorageValue::Blob(s.encode()), SqlStorageValue::Integer(deadline_ms as i64)],
            )
            .map_err(sql_err)?;
            let config = encode_policy(policy);
            if mem.written_under.as_deref() != Some(config.as_slice()) {
                sql.exec(
                    "INSERT OR REPLACE INTO written_under (id, config) VALUES (0, ?)",
                    vec![SqlStorageValue::Blob(config.clone())],
                )
                .map_err(sql_err)?;
                mem.written_under = Some(config);
            }
            Ok(())
        }
        None => sql.exec("DELETE FROM state", None).map(|_| ()).map_err(sql_err),
    }
}

/// Loads the sync-mode merged counts if not loaded.
pub fn load_central(mem: &mut Mem, sql: &Sql<'_>) -> Result<(), ApiError> {
    if mem.central.is_some() {
        return Ok(());
    }
    ensure_schema(mem, sql)?;
    let mut counts = CentralCounts::new();
    if let Some(row) = first_row(sql, "SELECT json FROM central WHERE id = 0")? {
        if let Some(SqlStorageValue::String(json)) = row.into_iter().next() {
            match serde_json::from_str::<Vec<(usize, u64, u64, u64)>>(&json) {
                Ok(rows) => counts.extend(rows.into_iter().map(|(l, s, c, e)| ((l, s), (c, e)))),
                Err(e) => {
                    crate::base::log::warn("stored_counts_dropped", serde_json::json!({ "reason": e.to_string() }))
                }
            }
        }
    }
    mem.central = Some(counts);
    Ok(())
}

/// Writes the merged counts through (or deletes them when empty).
pub fn save_central(sql: &Sql<'_>, counts: &CentralCounts, deadline_ms: u64) -> Result<(), ApiError> {
    if counts.is_empty() {
        return sql.exec("DELETE FROM central", None).map(|_| ()).map_err(sql_err);
    }
    let rows: Vec<(usize, u64, u64, u64)> = counts.iter().map(|(&(l, s), &(c, e))| (l, s, c, e)).collect();
    let json = serde_json::to_string(&rows).map_err(|e| ApiError::internal(e.to_string()))?;
    sql.exec(
        "INSERT OR REPLACE INTO central (id, json, deadline) VALUES (0, ?, ?)",
        vec![SqlStorageValue::String(json), SqlStorageValue::Integer(deadline_ms as i64)],
    )
    .map(|_| ())
    .map_err(sql_err)
}

/// The latest deadline of any stored row (Unix ms), `None` when nothing is stored.
pub fn deadline(mem: &std::cell::RefCell<Mem>, sql: &Sql<'_>) -> Result<Option<u64>, worker::Error> {
    ensure_schema(&mut mem.borrow_mut(), sql).map_err(|e| worker::Error::RustError(e.message))?;
    let cursor = sql.exec(
        "SELECT MAX(deadline) FROM (SELECT deadline FROM state UNION ALL SELECT deadline FROM central \
             UNION ALL SELECT deadline FROM quota)",
        None,
    )?;
    let row = cursor.raw().next().transpose()?;
    Ok(match row.and_then(|r| r.into_iter().next()) {
        Some(SqlStorageValue::Integer(d)) => Some(d.max(0) as u64),
        Some(SqlStorageValue::Float(d)) => Some(d.max(0.0) as u64),
        _ => None,
    })
}

/// How long after a key's state becomes fresh its storage is deleted. Deleting a fresh state
/// later changes no decision (it decides like no state at all); deleting it the moment it is
/// fresh left no room for a slow machine: with the test clock, a key hit at one fixed `now`
/// gets a deadline one emission interval away in real time, and a request arriving a little
/// later than that found its state gone (a flaky test in `make test`).
pub const DEADLINE_GRACE_MS: u64 = 1000;

/// The grace period of a state decided on the test clock (TEST_MODE only). The test clock
/// runs at the test's pace, not the real one: a replay slower than real time (the equivalence
/// fixture through the Worker on a busy machine) must not find a key's state deleted between
/// two of its hits that are closer than its window on the test clock.
pub const TEST_CLOCK_GRACE_MS: u64 = 600_000;

/// The real time (Unix ms) a state decided at `now` and fresh from `fresh_at` expires:
/// `fresh_at - now` from the real clock, rounded up. With the test clock, `now` is not the
/// real time; measuring from the real clock keeps the alarm meaningful either way.
pub fn real_deadline(real_now_ms: u64, now: Nanos, fresh_at: Nanos) -> u64 {
    real_now_ms.saturating_add(fresh_at.saturating_sub(now).as_millis_ceil())
}

/// When a key's stored state may be deleted: its `real_deadline` plus the grace period (the
/// test clock's when `now` is the test clock's).
pub fn storage_deadline(real_now_ms: u64, now: Nanos, fresh_at: Nanos, test_clock: bool) -> u64 {
    let grace = if test_clock { TEST_CLOCK_GRACE_MS } else { DEADLINE_GRACE_MS };
    real_deadline(real_now_ms, now, fresh_at).saturating_add(grace)
}

/// The merged counts the `central` row holds, as `[limit, window start ns, count]` (test-only
/// inspect: what a sync round made durable).
pub fn stored_counts(sql: &Sql<'_>) -> Result<Vec<(usize, u64, u64)>, ApiError> {
    let Some(SqlStorageValue::String(json)) =
        first_row(sql, "SELECT json FROM central WHERE id = 0")?.and_then(|row| row.into_iter().next())
    else {
        return Ok(Vec::new());
    };
    let rows: Vec<(usize, u64, u64, u64)> =
        serde_json::from_str(&json).map_err(|e| ApiError::internal(format!("stored counts: {e}")))?;
    Ok(rows.into_iter().map(|(l, s, c, _)| (l, s, c)).collect())
}

/// How many rows `state` and `central` hold (0 or 1 each), for the test-only inspect.
pub fn stored_rows(mem: &std::cell::RefCell<Mem>, sql: &Sql<'_>) -> Result<(u64, u64), ApiError> {
    ensure_schema(&mut mem.borrow_mut(), sql)?;
    let count = |table: &str| -> Result<u64, ApiError> {
        let row = first_row(sql, &format!("SELECT COUNT(*) FROM {table}"))?;
        Ok(match row.and_then(|r| r.into_iter().next()) {
            Some(SqlStorageValue::Integer(n)) => n.max(0) as u64,
            _ => 0,
        })
    };
    Ok((count("state")?, count("central")?))
}
