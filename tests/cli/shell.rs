//! The shell user's kit: `sqlrun completions SHELL` and `sqlrun man`. The bash script is
//! sourced in a real bash and asked to complete, as bash would at a prompt. Neither
//! command opens or creates a database, even in a project folder.

use std::path::Path;
use std::process::Command;

use crate::support::*;

/// A project folder whose sqlrun.toml names this sandbox's database (on SQLite the file
/// `project.db` there; on PostgreSQL the test server and the sandbox's schema).
fn project(sb: &Sandbox) -> &Path {
    let lines = match &sb.schema {
        None => "db = \"project.db\"\n".to_string(),
        Some(_) => {
            let (url, schema) = sb.url();
            format!("db = {url:?}\nschema = {schema:?}\n")
        }
    };
    std::fs::write(sb.path().join("sqlrun.toml"), lines).unwrap();
    sb.path()
}

/// The binary run in `dir` with `args` only: the settings are the project file's.
fn sqlrun_in(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    for (key, _) in std::env::vars() {
        if key.starts_with("SQLRUN_") {
            cmd.env_remove(key);
        }
    }
    let out = cmd
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run sqlrun");
    let run = Run::from(out);
    assert_eq!(
        run.code,
        0,
        "`sqlrun {}` in {}: {run:?}",
        args.join(" "),
        dir.display()
    );
    run
}

/// Whether the project's database exists (SQLite: its file; PostgreSQL: its schema).
fn database_exists(sb: &Sandbox) -> bool {
    match &sb.schema {
        None => sb.path().join("project.db").exists(),
        Some(schema) => {
            sb.count(&format!(
                "SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = '{schema}'"
            )) == 1
        }
    }
}

/// What bash's completion offers for the words of `line` (the cursor at its end), from
/// the script sourced in a real bash, as bash calls it at a prompt.
fn bash_completes(script: &Path, line: &str) -> Vec<String> {
    let source = format!("source '{}'", script.display());
    completes_in_bash(&source, "_sqlrun", script.parent().unwrap(), line)
}

/// What the completion `function`, defined by running `source`, offers in a real bash
/// in `dir` for `line` (the cursor at its end), called as bash calls it at a prompt.
fn completes_in_bash(source: &str, function: &str, dir: &Path, line: &str) -> Vec<String> {
    let words: Vec<&str> = line.split(' ').collect();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "{source}\n\
         COMP_WORDS=({})\n\
         COMP_CWORD={}\n\
         COMP_LINE='{line}'\n\
         COMP_POINT={}\n\
         COMP_TYPE=9\n\
         {function} sqlrun '{}' '{}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        quoted.join(" "),
        words.len() - 1,
        line.len(),
        words[words.len() - 1],
        words
            .get(words.len().wrapping_sub(2))
            .copied()
            .unwrap_or("")
    );
    let mut cmd = Command::new("bash");
    for (key, _) in std::env::vars() {
        if key.starts_with("SQLRUN_") {
            cmd.env_remove(key);
        }
    }
    let out = cmd
        .args(["--norc", "--noprofile", "-c", &program])
        .current_dir(dir)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash failed on `{line}`: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn bash_completes_commands_and_flags() {
    let sb = Sandbox::empty();
    let dir = project(&sb);
    let script = sqlrun_in(dir, &["completions", "bash"]).stdout;
    assert!(script.contains("_sqlrun()"), "{script}");
    let file = dir.join("sqlrun.bash");
    std::fs::write(&file, &script).unwrap();

    let commands = bash_completes(&file, "sqlrun ap");
    assert_eq!(commands, ["apply"], "sqlrun ap<TAB>");
    let all = bash_completes(&file, "sqlrun ");
    for command in ["apply", "status", "load", "completions", "man", "--db"] {
        assert!(all.contains(&command.to_string()), "{command} in {all:?}");
    }
    let flags = bash_completes(&file, "sqlrun apply --int");
    assert_eq!(flags, ["--interval"], "sqlrun apply --int<TAB>");
    let seal = bash_completes(&file, "sqlrun seal --");
    for flag in ["--interval", "--reason", "--by", "--db"] {
        assert!(seal.contains(&flag.to_string()), "{flag} in {seal:?}");
    }
    let shells = bash_completes(&file, "sqlrun completions ");
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        assert!(shells.contains(&shell.to_string()), "{shell} in {shells:?}");
    }
    assert!(!database_exists(&sb), "completions made the database");
}

#[test]
fn every_shell_gets_its_script() {
    let sb = Sandbox::empty();
    let dir = project(&sb);
    for (shell, mark) in [
        ("zsh", "#compdef sqlrun"),
        ("fish", "complete -c sqlrun"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion:arg-completer[sqlrun]"),
    ] {
        let script = sqlrun_in(dir, &["completions", shell]).stdout;
        assert!(script.contains(mark), "{shell}: {mark} in\n{script}");
        assert!(script.contains("--interval"), "{shell}: flags in\n{script}");
    }
    let json = sqlrun_in(dir, &["--json", "completions", "fish"]).stdout;
    let doc: serde_json::Value = serde_json::from_str(&json).expect("one JSON document");
    assert_eq!(doc["shell"], "fish");
    assert!(doc["script"]
        .as_str()
        .unwrap()
        .contains("complete -c sqlrun"));
    let bad = sb.run(&["completions", "tcsh"]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(
        bad.stderr.contains("bash") && bad.stderr.contains("zsh"),
        "{bad:?}"
    );
    assert!(!database_exists(&sb), "completions made the database");
}

#[test]
fn the_man_page_is_roff_with_every_command() {
    let sb = Sandbox::empty();
    let dir = project(&sb);
    let page = sqlrun_in(dir, &["man"]).stdout;
    assert!(page.contains(".TH sqlrun 1"), "the title line: {page}");
    assert!(
        page.contains(".SH NAME\nsqlrun \\- A backfill runner"),
        "{page}"
    );
    assert!(
        page.contains(".SH SYNOPSIS") && page.contains(".SH SUBCOMMANDS"),
        "{page}"
    );
    for command in [
        "init", "apply", "reserve", "release", "seal", "status", "runs", "load",
    ] {
        assert!(
            page.contains(&format!("sqlrun\\-{command}(1)")),
            "the page names sqlrun-{command}(1):\n{page}"
        );
    }
    assert!(
        !page.contains("sqlrun\\-help(1)"),
        "help has no page:\n{page}"
    );

    let apply = sqlrun_in(dir, &["man", "apply"]).stdout;
    assert!(apply.contains(".TH sqlrun-apply 1"), "{apply}");
    assert!(
        apply.contains("\\-\\-interval") && apply.contains("\\-\\-dry\\-run"),
        "{apply}"
    );

    let pages = dir.join("man1");
    let written = sqlrun_in(dir, &["man", "--dir", "man1"]).stdout;
    let mut files: Vec<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    for file in [
        "sqlrun.1",
        "sqlrun-apply.1",
        "sqlrun-load.1",
        "sqlrun-man.1",
    ] {
        assert!(files.contains(&file.to_string()), "{file} in {files:?}");
        assert!(written.contains(file), "names {file}: {written}");
    }
    assert!(!files.contains(&"sqlrun-help.1".to_string()), "{files:?}");
    let load = std::fs::read_to_string(pages.join("sqlrun-load.1")).unwrap();
    assert!(
        load.contains(".SH NAME\nsqlrun\\-load \\- Load rows"),
        "{load}"
    );

    let unknown = sb.run(&["man", "aply"]);
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(unknown.stderr.contains("no command aply") && unknown.stderr.contains("apply"));
    assert!(!database_exists(&sb), "man made the database");
}

#[test]
fn the_kit_reads_no_project_file() {
    // A project file that every other command refuses: completions and man never read it.
    let sb = Sandbox::empty();
    std::fs::write(sb.path().join("sqlrun.toml"), "db = [not toml\n").unwrap();
    sqlrun_in(sb.path(), &["completions", "bash"]);
    sqlrun_in(sb.path(), &["man"]);
    let status = Command::new(BIN)
        .arg("status")
        .current_dir(sb.path())
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(2), "other commands read it");
}

/// What clap's dynamic completion offers in a real bash for `line` (the cursor at its
/// end): its registration sourced from `SQLRUN_COMPLETE=bash sqlrun`, then called as bash would.
fn dynamic_completes(dir: &Path, line: &str) -> Vec<String> {
    let source = format!("source <(SQLRUN_COMPLETE=bash '{BIN}')");
    completes_in_bash(&source, "_clap_complete_sqlrun", dir, line)
}

#[test]
fn dynamic_completion_offers_the_pipelines_models_and_runs() {
    let sb = Sandbox::empty();
    let dir = project(&sb);
    assert_eq!(
        dynamic_completes(dir, "sqlrun apply --select "),
        ["daily_revenue"]
    );
    assert_eq!(
        dynamic_completes(dir, "sqlrun render --date 2026-02-01 daily_revenue_n"),
        ["daily_revenue_not_null"],
        "models and checks"
    );
    assert_eq!(dynamic_completes(dir, "sqlrun ap"), ["apply"]);
    let before = dynamic_completes(dir, "sqlrun runs ");
    assert!(before.iter().all(|w| w.starts_with('-')), "{before:?}");
    assert!(!database_exists(&sb), "completing made the database");

    sqlrun_in(dir, &["apply", "--create", "--interval", "2026-02-01"]);
    let runs = dynamic_completes(dir, "sqlrun runs ");
    // On SQLite the database is read read-only; a completion never connects to a server.
    assert_eq!(runs.contains(&"1".to_string()), is_sqlite(), "{runs:?}");
}
