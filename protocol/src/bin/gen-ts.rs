//! Writes the generated TypeScript protocol module to `protocol/ts/protocol.ts`.

fn main() -> std::io::Result<()> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = root.join(mimo_protocol::typescript::TYPESCRIPT_PATH);
    std::fs::write(&path, mimo_protocol::typescript::typescript_module())?;
    println!("wrote {}", path.display());
    Ok(())
}
