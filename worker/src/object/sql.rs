//! The key's object's SQL storage: every statement of the object goes through [`Sql`]. In the
//! test build (feature `test-hooks`) it first asks the storage fault a test armed
//! (storage_fault.rs); in a production build it is `SqlStorage` itself.

use worker::{SqlCursor, SqlStorage, SqlStorageValue};

/// What a test armed for this object: the storage fault in the test build, nothing otherwise.
#[cfg(feature = "test-hooks")]
pub type Faults = crate::tests::storage_fault::Armed;
/// What a test armed for this object: nothing, in a production build.
#[cfg(not(feature = "test-hooks"))]
pub type Faults = ();

/// The object's SQL storage, through what a test armed.
pub struct Sql<'a> {
    inner: SqlStorage,
    #[cfg_attr(not(feature = "test-hooks"), allow(dead_code))]
    faults: &'a Faults,
}

impl<'a> Sql<'a> {
    pub fn new(inner: SqlStorage, faults: &'a Faults) -> Self {
        Sql { inner, faults }
    }

    /// `SqlStorage::exec`, unless an armed fault fails this statement.
    pub fn exec(&self, query: &str, bindings: impl Into<Option<Vec<SqlStorageValue>>>) -> worker::Result<SqlCursor> {
        #[cfg(feature = "test-hooks")]
        if crate::tests::storage_fault::fails(self.faults, query) {
            return Err(worker::Error::RustError("injected storage fault".to_string()));
        }
        self.inner.exec(query, bindings)
    }
}
