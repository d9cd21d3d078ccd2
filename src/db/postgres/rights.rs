//! The rights a role needs, checked when a connection opens, before anything is written:
//! a pipeline's role needs its schema (or the right to create it) and USAGE on it; every
//! command reads the state store, so SELECT on its tables too. A missing one is named on
//! one line with the statement an admin runs to grant it. (Rights a write needs beyond
//! these are named when the server refuses one: explain.rs.)

use super::{Backend, Conn, Create, Error, Result};

/// An identifier as SQL spells it in double quotes, so that a GRANT in a message is
/// runnable for any name.
pub(super) fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// What the session's role may do with the schema (schema_rights.sql).
struct Rights {
    role: String,
    database: String,
    exists: bool,
    may_create_schema: bool,
    usage: bool,
    unreadable: Option<String>,
}

impl Conn {
    /// Refuses (exit 2) a role that cannot use the schema; Ok when it can (or when
    /// sqlrun will create the schema for it).
    /// A schema that does not exist is refused as absent when `create` says so.
    pub(super) fn check_rights(&mut self, schema: &str, label: &str, create: Create) -> Result<()> {
        let rights = self.rights(schema)?;
        if !rights.exists && create == Create::Refuse {
            return Err(Error::Absent(format!(
                "schema {schema} does not exist in database {}",
                // The label without its " (schema ...)", which this names already.
                label.split(" (schema").next().unwrap_or(label)
            )));
        }
        match missing(&rights, schema) {
            Some((message, fix)) => Err(Error::Open {
                target: label.to_string(),
                message,
                fix,
            }),
            None => Ok(()),
        }
    }

    fn rights(&mut self, schema: &str) -> Result<Rights> {
        let rows = self.rows(
            include_str!("../../../queries/postgres/schema_rights.sql"),
            &[(":schema", schema.into())],
        )?;
        let row = rows
            .first()
            .ok_or_else(|| super::DbError::other("schema_rights.sql returned no row"))?;
        Ok(Rights {
            role: row.text(0)?,
            database: row.text(1)?,
            exists: row.bool(2)?,
            may_create_schema: row.bool(3)?,
            usage: row.bool(4)?,
            unreadable: row.opt_text(5)?,
        })
    }
}

/// What is missing (the message and the fix), if anything.
fn missing(rights: &Rights, schema: &str) -> Option<(String, String)> {
    let (role, schema_q) = (quoted(&rights.role), quoted(schema));
    if !rights.exists {
        return (!rights.may_create_schema).then(|| {
            (
                format!(
                    "schema {schema_q} does not exist, and role {role} may not create schemas \
                     in database {}",
                    quoted(&rights.database)
                ),
                format!(
                    "an admin creates it for the role: CREATE SCHEMA {schema_q} AUTHORIZATION \
                     {role}; (or pass the --schema the role owns; `sqlrun demo`, whose scratch \
                     schema is new each time, needs GRANT CREATE ON DATABASE {} TO {role};)",
                    quoted(&rights.database)
                ),
            )
        });
    }
    if !rights.usage {
        return Some((
            format!("role {role} has no USAGE on schema {schema_q}"),
            format!("the schema's owner (or an admin) runs: GRANT USAGE ON SCHEMA {schema_q} TO {role};"),
        ));
    }
    let table = rights.unreadable.as_deref()?;
    Some((
        format!(
            "role {role} may not read {schema_q}.{} (every command reads the state store)",
            quoted(table)
        ),
        format!(
            "the schema's owner (or an admin) runs: GRANT SELECT ON ALL TABLES IN SCHEMA \
             {schema_q} TO {role};"
        ),
    ))
}

/// The statement that grants what the server refused (`cause`, PostgreSQL's "permission
/// denied for KIND NAME") to `role` in `schema`, if the cause names it. Opening checked
/// USAGE on the schema and SELECT on its tables, so a refusal there is a write: CREATE in
/// the schema (a migration, a new model's table), or a row written.
pub(super) fn grant_for(cause: &str, role: &str, schema: &str) -> Option<String> {
    let denied = cause.split("permission denied for ").nth(1)?;
    let (role, schema_q) = (quoted(role), quoted(schema));
    let kind_and_name = |kind: &str| {
        denied
            .strip_prefix(kind)
            .and_then(|rest| rest.strip_prefix(' '))
            .map(|rest| rest.split([':', ' ']).next().unwrap_or(rest).to_string())
    };
    if let Some(name) = kind_and_name("schema") {
        return Some(if name == schema {
            format!("GRANT CREATE ON SCHEMA {schema_q} TO {role};")
        } else {
            format!("GRANT USAGE ON SCHEMA {} TO {role};", quoted(&name))
        });
    }
    if let Some(name) = kind_and_name("database") {
        return Some(format!(
            "GRANT CREATE ON DATABASE {} TO {role};",
            quoted(&name)
        ));
    }
    if kind_and_name("sequence").is_some() {
        return Some(format!(
            "GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema_q} TO {role};"
        ));
    }
    if kind_and_name("function").is_some() || kind_and_name("procedure").is_some() {
        return Some(format!(
            "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA {schema_q} TO {role};"
        ));
    }
    ["table", "view", "materialized view", "foreign table"]
        .iter()
        .any(|kind| kind_and_name(kind).is_some())
        .then(|| {
            format!(
                "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema_q} TO \
                 {role}; GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema_q} TO {role};"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rights() -> Rights {
        Rights {
            role: "etl".into(),
            database: "db".into(),
            exists: true,
            may_create_schema: false,
            usage: true,
            unreadable: None,
        }
    }

    #[test]
    fn a_role_that_may_use_its_schema_passes() {
        assert_eq!(missing(&rights(), "sales"), None);
        let creatable = Rights {
            exists: false,
            may_create_schema: true,
            ..rights()
        };
        assert_eq!(missing(&creatable, "sales"), None);
    }

    #[test]
    fn each_missing_right_is_named_with_its_statement() {
        let no_schema = Rights {
            exists: false,
            ..rights()
        };
        let (_, fix) = missing(&no_schema, "sales").unwrap();
        assert!(
            fix.contains(r#"CREATE SCHEMA "sales" AUTHORIZATION "etl";"#),
            "{fix}"
        );
        let no_usage = Rights {
            usage: false,
            ..rights()
        };
        let (_, fix) = missing(&no_usage, "sales").unwrap();
        assert!(
            fix.contains(r#"GRANT USAGE ON SCHEMA "sales" TO "etl";"#),
            "{fix}"
        );
        let no_select = Rights {
            unreadable: Some("runs".into()),
            ..rights()
        };
        let (message, fix) = missing(&no_select, "sales").unwrap();
        assert!(message.contains(r#""sales"."runs""#), "{message}");
        assert!(fix.contains(r#"GRANT SELECT ON ALL TABLES IN SCHEMA "sales" TO "etl";"#));
    }

    #[test]
    fn a_refusal_of_the_server_gets_its_grant() {
        let grant = |cause| grant_for(cause, "ro", "sales");
        assert_eq!(
            grant("permission denied for schema sales").as_deref(),
            Some(r#"GRANT CREATE ON SCHEMA "sales" TO "ro";"#)
        );
        assert_eq!(
            grant("permission denied for schema other").as_deref(),
            Some(r#"GRANT USAGE ON SCHEMA "other" TO "ro";"#)
        );
        assert_eq!(
            grant("permission denied for database t").as_deref(),
            Some(r#"GRANT CREATE ON DATABASE "t" TO "ro";"#)
        );
        let table = grant("permission denied for table runs").unwrap();
        assert!(
            table.starts_with(
                r#"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "sales" TO "ro";"#
            ),
            "{table}"
        );
        assert_eq!(grant("must be owner of view x"), None);
    }

    #[test]
    fn names_are_quoted_for_sql() {
        assert_eq!(quoted(r#"a"b"#), r#""a""b""#);
    }
}
