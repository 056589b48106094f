/// Trellis's version, as `trellis --version` prints it and as Trellis names itself to other
/// systems (Home Assistant's `origin` and `device` blocks). Raised with every release.
public enum TrellisVersion {
    public static let current = "0.1.0"
}
