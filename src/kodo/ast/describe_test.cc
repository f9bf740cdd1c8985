#include "kodo/ast/describe.h"

#include <gtest/gtest.h>

#include <limits>

namespace trove::kodo::ast {
namespace {

TEST(RustDebugStringTest, EscapesLikeRustStrDebug) {
  EXPECT_EQ(RustDebugString("plain"), "\"plain\"");
  EXPECT_EQ(RustDebugString("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(RustDebugString("back\\slash"), "\"back\\\\slash\"");
  EXPECT_EQ(RustDebugString("l1\nl2\tt\r\0z"), "\"l1\\nl2\\tt\\r\"");  // stops at the NUL literal
  EXPECT_EQ(RustDebugString(std::string_view("n\0z", 3)), "\"n\\0z\"");
  EXPECT_EQ(RustDebugString("\x01\x1f\x7f"), "\"\\u{1}\\u{1f}\\u{7f}\"");
  EXPECT_EQ(RustDebugString("it's"), "\"it's\"");  // `'` is not escaped in a str
  EXPECT_EQ(RustDebugString("K\xC5\x8D"
                            "do"),
            "\"K\xC5\x8D"
            "do\"");  // printable UTF-8 kept
  EXPECT_EQ(RustDebugString("{x}"), "\"{x}\"");
}

TEST(RustDebugFloatTest, ShortestRoundTripWithFractionalDigit) {
  EXPECT_EQ(RustDebugFloat(1.0), "1.0");
  EXPECT_EQ(RustDebugFloat(0.95), "0.95");
  EXPECT_EQ(RustDebugFloat(3.5), "3.5");
  EXPECT_EQ(RustDebugFloat(3.14), "3.14");
  EXPECT_EQ(RustDebugFloat(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(RustDebugFloat(100.0), "100.0");
  EXPECT_EQ(RustDebugFloat(123456.75), "123456.75");
  EXPECT_EQ(RustDebugFloat(0.0), "0.0");
  EXPECT_EQ(RustDebugFloat(-0.0), "-0.0");
  EXPECT_EQ(RustDebugFloat(-2.5), "-2.5");
  EXPECT_EQ(RustDebugFloat(0.0001), "0.0001");
  EXPECT_EQ(RustDebugFloat(1e15), "1000000000000000.0");
}

TEST(RustDebugFloatTest, ExponentFormOutsideRustsDecimalRange) {
  EXPECT_EQ(RustDebugFloat(1e16), "1e16");
  EXPECT_EQ(RustDebugFloat(1.5e17), "1.5e17");
  EXPECT_EQ(RustDebugFloat(0.00001), "1e-5");
  EXPECT_EQ(RustDebugFloat(1.5e-7), "1.5e-7");
  EXPECT_EQ(RustDebugFloat(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(RustDebugFloat(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(RustDebugFloat(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(DescribeTypeTest, SpecForms) {
  // docs/kodo.md §6.4, quoted.
  EXPECT_EQ(DescribeType(TypeExpr::Named("Int")), "Named(\"Int\")");
  TypeExpr list{TypeKind::kGeneric, "List", {TypeExpr::Named("Int")}};
  EXPECT_EQ(DescribeType(list), "Generic(\"List\", [Named(\"Int\")])");
  TypeExpr fn{TypeKind::kFunction, "", {TypeExpr::Named("Int"), TypeExpr::Named("Bool")}};
  EXPECT_EQ(DescribeType(fn), "Function([Named(\"Int\")], Named(\"Bool\"))");
  EXPECT_EQ(DescribeType(TypeExpr::Unit()), "Unit");
  TypeExpr opt{TypeKind::kOptional, "", {TypeExpr::Named("Int")}};
  EXPECT_EQ(DescribeType(opt), "Optional(Named(\"Int\"))");
  TypeExpr tuple{TypeKind::kTuple, "", {TypeExpr::Named("Int"), TypeExpr::Named("String")}};
  EXPECT_EQ(DescribeType(tuple), "Tuple([Named(\"Int\"), Named(\"String\")])");
  TypeExpr dyn{TypeKind::kDynTrait, "Show", {}};
  EXPECT_EQ(DescribeType(dyn), "DynTrait(\"Show\")");
}

TEST(DescribeExprTest, HandBuiltBinaryOpMatchesSpecExample) {
  // docs/kodo.md §6.4: `requires { b != 0 }` with `b` at 52 and `0` at 57.
  Expr b;
  b.kind = ExprKind::kIdent;
  b.text = "b";
  b.span = Span{52, 53};
  Expr zero;
  zero.kind = ExprKind::kIntLit;
  zero.int_value = 0;
  zero.span = Span{57, 58};
  Expr ne;
  ne.kind = ExprKind::kBinaryOp;
  ne.bin_op = BinOp::kNe;
  ne.span = Span{52, 58};
  ne.operands.push_back(std::move(b));
  ne.operands.push_back(std::move(zero));
  EXPECT_EQ(DescribeExpr(ne),
            "BinaryOp { left: Ident(\"b\", Span { start: 52, end: 53 }), op: Ne, right: IntLit(0, "
            "Span { start: 57, end: 58 }), span: Span { start: 52, end: 58 } }");
}

TEST(DescribeTest, AnnotationArgs) {
  AnnotationArg positional;
  positional.value.kind = ExprKind::kFloatLit;
  positional.value.float_value = 0.95;
  positional.value.span = Span{13, 17};
  EXPECT_EQ(DescribeAnnotationArg(positional),
            "Positional(FloatLit(0.95, Span { start: 13, end: 17 }))");
  AnnotationArg named;
  named.named = true;
  named.key = "agent";
  named.value.kind = ExprKind::kStringLit;
  named.value.text = "claude";
  named.value.span = Span{20, 28};
  EXPECT_EQ(DescribeAnnotationArg(named),
            "Named(\"agent\", StringLit(\"claude\", Span { start: 20, end: 28 }))");
}

}  // namespace
}  // namespace trove::kodo::ast
