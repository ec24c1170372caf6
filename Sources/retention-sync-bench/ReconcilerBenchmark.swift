@Sendable func reconcilerBenchmark(_ arguments: [String]) async throws {
    print("the reconciler benchmark is not built yet")
}
