"""Groups a callgrind_annotate listing (self cost per function, demangled) by what the code is, per request.

Used by instructions.sh: `callgrind_annotate FILE | swift demangle --simplified | python3 instructions-groups.py
REQUESTS [TOP]`. Prints the instructions per request of each group, then the TOP costliest functions.
"""
import re
import sys

requests = int(sys.argv[1])
top = int(sys.argv[2]) if len(sys.argv) > 2 else 25

# First match wins: the runtime's own names before the broad ones (a string's release is reference counting).
GROUPS = [
    ("reference counting", r"swift_(retain|release|bridgeObject|isUniquely|unknownObject|deallocClassInstance|"
                           r"deallocObject|allocObject|slowAlloc|slowDealloc|arrayDestroy|arrayInit)|RefCounts|"
                           r"_swift_release_dealloc|__deallocating_deinit|value witness|outlined (copy|destroy)"),
    ("concurrency runtime", r"swift_task|swift_job|swift_continuation|StatusRecord|AsyncTask|StackAllocator|"
                            r"runJob|TaskLocal|swift_asyncLet|NetworkThreadExecutor|implicitisolationactor"),
    ("locks", r"pthread_mutex|Mutex|withLock"),
    ("malloc and free", r"\b(malloc|free|calloc|_int_malloc|_int_free|malloc_usable_size|cfree)\b|arena"),
    ("type metadata", r"Metadata|instantiateConcreteType|getCache|swift_once|conformsTo|swift_get"),
    ("clocks and durations", r"Duration|Int128|clock_gettime|swift_get_time|vdso|Date\b|ContinuousClock"),
    ("hashing", r"Hasher|hashValue|_RawDictionaryStorage"),
    ("strings and bytes", r"String|UTF8|utf8|Unicode|_allASCII|strlen|Character|mem(cpy|move|set|cmp)|"
                          r"UnsafeMutablePointer\.initialize"),
    ("libmosquitto", r"libmosquitto|mosquitto_"),
    ("system call stubs", r"\b(read|write|poll|sched_yield|__errno_location)\b|asynccancel|libc\.so"),
]

rows = []
for line in sys.stdin:
    match = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)", line)
    if match and "PROGRAM TOTALS" not in line:
        rows.append((int(match.group(1).replace(",", "")), match.group(2)))
totals = {}
for cost, name in rows:
    group = next((g for g, pattern in GROUPS if re.search(pattern, name)), "everything else")
    totals[group] = totals.get(group, 0) + cost
print("Trellis's instructions per request, by what they are:")
for group, cost in sorted(totals.items(), key=lambda item: -item[1]):
    print(f"  {cost / requests:8.0f}  {group}")
print(f"\nTrellis's {top} costliest functions (own instructions per request):")
for cost, name in sorted(rows, reverse=True)[:top]:
    name = re.sub(r"^\?\?\?:", "", name).replace(" [", "  [")
    print(f"  {cost / requests:8.0f}  {name[:150]}")
