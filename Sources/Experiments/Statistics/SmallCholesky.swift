/// The Cholesky factor `L` (lower triangular, `A = L·Lᵀ`) of a small symmetric positive semi-definite
/// matrix: the normal equations of a regression with a handful of columns.
///
/// A column whose pivot falls to `tolerance` times its own diagonal or below is, up to rounding, a
/// linear combination of the columns before it (two facts that are unknown for exactly the same
/// customers, say). It is skipped — its row and column of `L` stay zero — and listed in `dependent`;
/// `solve` then solves the system without it and gives it 0, which is the factor of the matrix with that
/// column removed, so the caller can drop it and nothing else changes.
struct SmallCholesky {
    let size: Int
    /// Row-major, `size × size`.
    private var lower: [Double]
    private(set) var dependent: [Int] = []

    init(_ matrix: [Double], size: Int, tolerance: Double = 1e-9) {
        precondition(matrix.count == size * size, "a \(size) × \(size) matrix has \(size * size) entries")
        self.size = size
        lower = [Double](repeating: 0, count: size * size)
        for j in 0 ..< size {
            var pivot = matrix[j * size + j]
            for k in 0 ..< j { pivot -= lower[j * size + k] * lower[j * size + k] }
            guard matrix[j * size + j] > 0, pivot > tolerance * matrix[j * size + j] else {
                dependent.append(j)
                continue
            }
            let root = pivot.squareRoot()
            lower[j * size + j] = root
            for i in j + 1 ..< size {
                var value = matrix[i * size + j]
                for k in 0 ..< j { value -= lower[i * size + k] * lower[j * size + k] }
                lower[i * size + j] = value / root
            }
        }
    }

    /// `x` with `A·x = b` over the independent columns, and 0 for every dependent one.
    func solve(_ b: [Double]) -> [Double] {
        precondition(b.count == size)
        var y = [Double](repeating: 0, count: size)
        for i in 0 ..< size where lower[i * size + i] > 0 {
            var value = b[i]
            for k in 0 ..< i { value -= lower[i * size + k] * y[k] }
            y[i] = value / lower[i * size + i]
        }
        var x = [Double](repeating: 0, count: size)
        for i in stride(from: size - 1, through: 0, by: -1) where lower[i * size + i] > 0 {
            var value = y[i]
            for k in i + 1 ..< size { value -= lower[k * size + i] * x[k] }
            x[i] = value / lower[i * size + i]
        }
        return x
    }
}
