// The schema is embedded from Resources/ (a test keeps it identical to manifests/retention-sync.schema.json),
// so that `retention-sync init` can write it beside the manifests it creates.

/// The JSON Schema (draft 2020-12) of one manifest document, for editors with the YAML language server.
public enum ManifestSchema {
    /// The name the schema file has beside the manifests, as `$schema=` comments refer to it.
    public static let fileName = "retention-sync.schema.json"

    /// The schema's text, embedded from `Resources/retention-sync.schema.json` at build time.
    public static let json = String(decoding: PackageResources.retention_sync_schema_json, as: UTF8.self)
}
