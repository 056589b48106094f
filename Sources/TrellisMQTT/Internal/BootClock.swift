#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Nanoseconds of the clock `ContinuousClock` reads (on Linux `CLOCK_BOOTTIME`, which goes on
/// while the machine sleeps), as a plain integer: the network loop notes the time at every pass
/// and the relay times every message, where a `ContinuousClock` duration divides 128-bit numbers
/// to give nanoseconds.
package enum BootClock {
    package static var nanoseconds: UInt64 {
        var now = timespec()
        #if canImport(Glibc)
            clock_gettime(CLOCK_BOOTTIME, &now)
        #else
            clock_gettime(CLOCK_MONOTONIC_RAW, &now)
        #endif
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }
}
