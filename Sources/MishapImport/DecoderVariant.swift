import MishapScenarios

/// A success answer changed in one way that an app's decoder may not survive, named for what it
/// breaks. Made from the success body and its schema (`DecoderVariants`); each becomes a rule
/// that answers only when forced.
struct DecoderVariant {
    /// The rule's name: `missingRequiredField`, `nullNotNullable`...
    var name: String
    /// What was changed, for the comment above the rule: `the required field 'id' left out`.
    var change: String
    var body: Body

    /// The changed answer: JSON, or bytes that are not JSON any more.
    enum Body {
        case json(JSONTree)
        /// Text sent as `application/json` (JSON cut short).
        case jsonText(String)
        /// Bytes sent as `application/json` (a byte order mark before the JSON).
        case jsonBytes([UInt8])
    }
}
