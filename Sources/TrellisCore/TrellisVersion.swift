import TrellisBuildInfo

/// Trellis's version, as `trellis --version` prints it and as Trellis names itself to other
/// systems (Home Assistant's `origin` and `device` blocks). Raised with every release, together
/// with a new first entry of CHANGELOG.md (a test keeps the two equal); the Debian package takes
/// its version from here.
public enum TrellisVersion {
    public static let current = "0.1.0"

    /// The git commit the binary was built from (12 hex digits), or "unknown" when it was built
    /// outside a git checkout. Computed at build time by the TrellisBuildInfo plugin; everything
    /// that names the build reads it here.
    public static var commit: String { TrellisBuildInfo.commit }

    /// What `trellis --version` prints: `0.1.0 (commit 0123456789ab)`.
    public static var description: String { "\(current) (commit \(commit))" }
}
