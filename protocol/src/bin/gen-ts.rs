//! Writes the generated TypeScript protocol module to `protocol/ts/protocol.ts`, and the model's
//! tool schemas to `protocol/schemas/` (the worker reads them as written: no schema generator in
//! its wasm).

fn main() -> std::io::Result<()> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = root.join(mimo_protocol::typescript::TYPESCRIPT_PATH);
    std::fs::write(&path, mimo_protocol::typescript::typescript_module())?;
    println!("wrote {}", path.display());
    use mimo_protocol::agent::*;
    for (file, schema) in [
        (AGENT_OUTPUT_SCHEMA_PATH, generated_agent_output_schema()),
        (BROWSER_TASK_SCHEMA_PATH, generated_browser_task_schema()),
    ] {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().expect("a folder"))?;
        let text = serde_json::to_string_pretty(&schema).expect("a schema is JSON") + "\n";
        std::fs::write(&path, text)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
