//! Leased quota (a policy with `leaseTtl`): this object is the only authority over its key's
//! quota and keeps the core's `QuotaLedger`, the slices of the current windows granted to
//! isolates. One exchange reads the ledger, applies the core's `exchange` and writes it
//! through before answering (synchronous SQL, no `await` in between, so exchanges of one key
//! are applied one after another and the ledger never grants more than the limit). A peek
//! reads the ledger and writes nothing.

use tollgate::quota_lease::QuotaLedger;
use tollgate::Nanos;
use worker::SqlStorageValue;

use super::sql::Sql;
use super::storage::{ensure_schema, storage_deadline, Mem};
use crate::base::errors::ApiError;
use crate::config::settings::PolicyConfig;
use crate::wire::quota_wire::{QuotaReply, QuotaRequest};

fn sql_err(e: worker::Error) -> ApiError {
    ApiError::internal(format!("storage: {e}"))
}

/// The ledger as stored; fresh when there is none. A ledger written under other limits (the
/// configuration changed, or the other book: version 1 bytes are the fixed windows' counters,
/// version 2 the charged book) does not restore and starts fresh, as a key's state under a
/// new algorithm does.
fn load(sql: &Sql<'_>, pc: &PolicyConfig) -> Result<QuotaLedger, ApiError> {
    let mut ledger = QuotaLedger::for_policy(&pc.policy);
    let cursor = sql.exec("SELECT bytes FROM quota WHERE id = 0", None).map_err(sql_err)?;
    let row = cursor.raw().next().transpose().map_err(sql_err)?;
    if let Some(SqlStorageValue::Blob(bytes)) = row.and_then(|r| r.into_iter().next()) {
        if let Err(e) = ledger.restore(&bytes) {
            crate::base::log::warn(
                "quota_ledger_reset",
                serde_json::json!({ "policy": pc.name, "reason": e.to_string() }),
            );
        }
    }
    Ok(ledger)
}

/// One exchange at `now`: the answer and the real time (ms) the ledger stops mattering (for
/// the alarm).
pub fn exchange(
    mem: &std::cell::RefCell<Mem>,
    sql: &Sql<'_>,
    pc: &PolicyConfig,
    r: &QuotaRequest,
    now: Nanos,
) -> Result<(QuotaReply, u64), ApiError> {
    ensure_schema(&mut mem.borrow_mut(), sql)?;
    let mut ledger = load(sql, pc)?;
    let ttl = Nanos::from_millis(pc.lease_ms);
    let g = ledger
        .exchange(&r.holder, r.give_back, r.need, r.want, ttl, now)
        .map_err(|e| ApiError::bad_request("invalid_body", e.to_string()))?;
    let deadline = storage_deadline(worker::Date::now().as_millis(), now, ledger.expiry(), r.now.is_some());
    sql.exec(
        "INSERT OR REPLACE INTO quota (id, bytes, deadline) VALUES (0, ?, ?)",
        Some(vec![SqlStorageValue::Blob(ledger.encode()), SqlStorageValue::Integer(deadline as i64)]),
    )
    .map_err(sql_err)?;
    Ok((QuotaReply::of(now, &g), deadline))
}

/// A peek at `now`: what the ledger could still grant and what `r.holder` holds, read
/// without writing anything (no grant, no alarm).
pub fn peek(
    mem: &std::cell::RefCell<Mem>,
    sql: &Sql<'_>,
    pc: &PolicyConfig,
    r: &QuotaRequest,
    now: Nanos,
) -> Result<QuotaReply, ApiError> {
    ensure_schema(&mut mem.borrow_mut(), sql)?;
    Ok(QuotaReply::of(now, &load(sql, pc)?.standing(&r.holder, now)))
}
