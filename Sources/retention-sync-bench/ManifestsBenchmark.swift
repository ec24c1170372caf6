@Sendable func manifestsBenchmark(_ arguments: [String]) async throws {
    print("the manifests benchmark is not built yet")
}
