// What `RecordedRequest.range` holds, usable with `import MishapTesting` alone.
@_exported import class MishapEngine.RangeOutcome
@_exported import enum MishapEngine.RangeFault
