//! Read-only access to a Nova store for assertions, the way support staff would look at it.

use std::path::Path;

use serde_json::{Map, Value};

/// Every observation row as a JSON object keyed by column name, in sequence order.
pub fn observations(db: &Path) -> anyhow::Result<Vec<Value>> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = conn.prepare("SELECT * FROM observations ORDER BY seq")?;
    let names: Vec<String> = stmt.column_names().into_iter().map(str::to_owned).collect();
    let rows = stmt.query_map([], |row| {
        let mut obj = Map::new();
        for (i, name) in names.iter().enumerate() {
            let v = match row.get_ref(i)? {
                rusqlite::types::ValueRef::Null => Value::Null,
                rusqlite::types::ValueRef::Integer(n) => Value::from(n),
                rusqlite::types::ValueRef::Real(f) => Value::from(f),
                rusqlite::types::ValueRef::Text(t) => Value::from(String::from_utf8_lossy(t).into_owned()),
                rusqlite::types::ValueRef::Blob(b) => Value::from(b.len()),
            };
            obj.insert(name.clone(), v);
        }
        Ok(Value::Object(obj))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One integer from a read-only query (counts for assertions).
pub fn query_i64(db: &Path, sql: &str) -> anyhow::Result<i64> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    Ok(conn.query_row(sql, [], |r| r.get(0))?)
}
