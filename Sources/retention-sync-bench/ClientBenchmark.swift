@Sendable func clientBenchmark(_ arguments: [String]) async throws {
    print("the client benchmark is not built yet")
}
