/// What the build knew about its source. `gitCommit` comes from `GitCommit.swift`, which the
/// TrellisBuildInfo plugin writes into the build directory (it is not in the repository).
/// Read it through `TrellisVersion.commit`.
public enum TrellisBuildInfo {
    /// The git commit the binary was built from (12 hex digits), or "unknown" when it was built
    /// outside a git checkout.
    public static let commit: String = gitCommit
}
