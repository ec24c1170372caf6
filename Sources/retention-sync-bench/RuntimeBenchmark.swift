@Sendable func runtimeBenchmark(_ arguments: [String]) async throws {
    print("the runtime benchmark is not built yet")
}
