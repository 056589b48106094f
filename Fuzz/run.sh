#!/usr/bin/env bash
# Builds each fuzz target with libFuzzer and AddressSanitizer and runs it.
#   Fuzz/run.sh [RUNS]      (default 1000000 inputs per target)
# Each target's corpus of interesting inputs lives in Fuzz/corpus/<target>/ and grows as it runs;
# a crash leaves its input in Fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1000000}"
out=.build-fuzz
mkdir -p "$out/modules" "$out/build-info" Fuzz/crashes
# TrellisCore imports TrellisBuildInfo, whose GitCommit.swift SwiftPM's build plugin writes: write it here the
# same way and build the module first, for every target; and TrellisMQTTTypes, which has no dependency.
printf 'let gitCommit = "%s"\n' "$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" > "$out/build-info/GitCommit.swift"
swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name TrellisBuildInfo -wmo \
    -emit-module -emit-module-path "$out/modules/TrellisBuildInfo.swiftmodule" \
    -emit-library -static Sources/TrellisBuildInfo/*.swift "$out/build-info/GitCommit.swift" -o "$out/libTrellisBuildInfo.a"
swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name TrellisMQTTTypes -wmo \
    -emit-module -emit-module-path "$out/modules/TrellisMQTTTypes.swiftmodule" \
    -emit-library -static Sources/TrellisMQTTTypes/*.swift -o "$out/libTrellisMQTTTypes.a"
for target in Fuzz/Targets/*.swift; do
    name="$(basename "$target" .swift)"
    # A target names the module it is compiled into on a `// fuzz-module:` line (default TrellisCore).
    module="$(sed -n 's|^// fuzz-module: *||p' "$target" | head -1)"
    module="${module:-TrellisCore}"
    # Modules it imports are named on a `// fuzz-depends:` line (space-separated), each built first
    # as its own instrumented static library.
    read -ra depends <<< "$(sed -n 's|^// fuzz-depends: *||p' "$target" | head -1)"
    libraries=()
    for dependency in "${depends[@]}"; do
        echo "== $name: building $dependency"
        mapfile -t sources < <(find "Sources/$dependency" -name '*.swift' | sort)
        swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name "$dependency" -I "$out/modules" -wmo \
            -emit-module -emit-module-path "$out/modules/$dependency.swiftmodule" \
            -emit-library -static "${sources[@]}" -o "$out/lib$dependency.a"
        libraries+=("$out/lib$dependency.a")
    done
    # Static libraries link in order: the modules every target's code needs come after those using them.
    libraries+=("$out/libTrellisBuildInfo.a" "$out/libTrellisMQTTTypes.a")
    mapfile -t sources < <(find "Sources/$module" -name '*.swift' | sort)
    echo "== $name: building"
    swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name "$module" -I "$out/modules" \
        "${sources[@]}" "$target" "${libraries[@]}" -o "$out/$name" 2>&1 | grep -v "Cannot export local symbol" || true
    mkdir -p "Fuzz/corpus/$name" "$out/corpus-$name"
    echo "== $name: $runs inputs"
    "$out/$name" -runs="$runs" -max_len=4096 -rss_limit_mb=1024 -malloc_limit_mb=256 \
        -artifact_prefix=Fuzz/crashes/ "$out/corpus-$name" "Fuzz/corpus/$name" 2>&1 | grep -E "^Done|ERROR|SUMMARY|rss:" | tail -3
    # Keep the committed corpus small: only inputs that add coverage.
    mkdir -p "$out/min-$name" && rm -rf "$out/min-$name"/*
    "$out/$name" -merge=1 "$out/min-$name" "Fuzz/corpus/$name" "$out/corpus-$name" >/dev/null 2>&1
    rm -rf "Fuzz/corpus/$name" && mv "$out/min-$name" "Fuzz/corpus/$name"
done
