#include "kodo/mir/prelude.h"

namespace trove::kodo::mir {

std::string_view PreludeSource() {
  return R"KODO(module __prelude {
    meta { purpose: "builtin methods written in Kodo" }

    fn List_map(xs: List<Int>, f: (Int) -> Int) -> List<Int> {
        let out = list_new()
        for x in xs {
            list_push(out, f(x))
        }
        return out
    }

    fn List_filter(xs: List<Int>, f: (Int) -> Bool) -> List<Int> {
        let out = list_new()
        for x in xs {
            if f(x) {
                list_push(out, x)
            }
        }
        return out
    }

    fn List_fold(xs: List<Int>, init: Int, f: (Int, Int) -> Int) -> Int {
        let mut acc = init
        for x in xs {
            acc = f(acc, x)
        }
        return acc
    }

    fn List_reduce(xs: List<Int>, init: Int, f: (Int, Int) -> Int) -> Int {
        let mut acc = init
        for x in xs {
            acc = f(acc, x)
        }
        return acc
    }

    fn List_count(xs: List<Int>, f: (Int) -> Bool) -> Int {
        let mut n = 0
        for x in xs {
            if f(x) {
                n = n + 1
            }
        }
        return n
    }

    fn List_any(xs: List<Int>, f: (Int) -> Bool) -> Bool {
        for x in xs {
            if f(x) {
                return true
            }
        }
        return false
    }

    fn List_all(xs: List<Int>, f: (Int) -> Bool) -> Bool {
        for x in xs {
            if !f(x) {
                return false
            }
        }
        return true
    }

    fn List_sort_by(xs: List<Int>, cmp: (Int, Int) -> Int) {
        let n = list_length(xs)
        let mut i = 1
        while i < n {
            let key = list_get(xs, i)
            let mut j = i - 1
            let mut moving = true
            while moving {
                if j < 0 {
                    moving = false
                } else {
                    let cur = list_get(xs, j)
                    if cmp(cur, key) > 0 {
                        list_set(xs, j + 1, cur)
                        j = j - 1
                    } else {
                        moving = false
                    }
                }
            }
            list_set(xs, j + 1, key)
            i = i + 1
        }
    }

    fn map_filter(m: Map<Int, Int>, f: (Int, Int) -> Bool) -> Map<Int, Int> {
        let out = map_new()
        for k in m {
            let v = map_get(m, k)
            if f(k, v) {
                map_insert(out, k, v)
            }
        }
        return out
    }

    fn Map_filter(m: Map<Int, Int>, f: (Int, Int) -> Bool) -> Map<Int, Int> {
        return map_filter(m, f)
    }
}
)KODO";
}

}  // namespace trove::kodo::mir
