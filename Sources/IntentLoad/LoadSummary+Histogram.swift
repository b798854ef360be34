import Foundation
import Histogram

extension LoadSummary {
    /// The standard HdrHistogram percentile-distribution text of the time to final reply, in milliseconds
    /// (the `.hgrm` format plotting tools read, e.g. HdrHistogram's online plotter).
    public var finalReplyDistribution: String { Self.distribution(finalReplyHistogram) }

    /// The same for the time to first reply.
    public var firstReplyDistribution: String { Self.distribution(firstReplyHistogram) }

    static func distribution(_ histogram: Histogram<UInt64>) -> String {
        var text = ""
        histogram.outputPercentileDistribution(to: &text, outputValueUnitScalingRatio: 1000)
        return text
    }
}
