//! Embeds templates/ in the binary (the built-in pipeline and the generic machinery), and
//! makes a new file in sql/, templates/ or queries/ trigger a rebuild (refinery's
//! embed_migrations! and include_str! do not notice new files by themselves).

use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=sql");
    println!("cargo:rerun-if-changed=queries");
    println!("cargo:rerun-if-changed=templates");

    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let mut files = Vec::new();
    collect(&root.join("templates"), &mut files);
    files.sort();

    let mut out = String::from("pub static BUILTIN_TEMPLATES: &[(&str, &str)] = &[\n");
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let rel = path.strip_prefix(root.join("templates")).unwrap();
        let rel = rel.to_str().unwrap().replace('\\', "/");
        out.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("builtin_templates.rs");
    fs::write(dest, out).unwrap();
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "sql") {
            out.push(path);
        }
    }
}
