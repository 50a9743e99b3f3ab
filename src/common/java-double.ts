// Java's Double.toString for the numbers Kafka prints and stores as doubles (quota values:
// "1048576.0", "1.048576E7"): the shortest digits that read back as the same double, plain between
// 10^-3 and 10^7 (with ".0" when integral), else d.dddE±n.

export function javaDoubleToString(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "Infinity";
  if (v === Number.NEGATIVE_INFINITY) return "-Infinity";
  if (v === 0) return Object.is(v, -0) ? "-0.0" : "0.0";
  const abs = Math.abs(v);
  if (abs >= 1e-3 && abs < 1e7) {
    const plain = v.toString();
    return plain.includes(".") ? plain : `${plain}.0`;
  }
  const [mantissa, exp] = v.toExponential().split("e");
  return `${mantissa.includes(".") ? mantissa : `${mantissa}.0`}E${Number(exp)}`;
}
