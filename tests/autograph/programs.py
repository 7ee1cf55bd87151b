"""Small programs with Python control flow, for the three-way AutoGraph test: each runs as
plain Python on Python numbers, eagerly on em.Tensors (Python control flow on eager values)
and compiled by em.function (converted by AutoGraph and staged where a condition is a
tensor). `PROGRAMS` pairs each with argument tuples; integers stay small (int32)."""


def absolute(x):
    if x < 0:
        x = -x
    return x


def clip(x, lo, hi):
    if x < lo:
        y = lo
    elif x > hi:
        y = hi
    else:
        y = x
    return y


def sign(x):
    if x > 0:
        return 1
    elif x < 0:
        return -1
    return 0


def sum_to(n):
    s = 0
    i = 0
    while i < n:
        i += 1
        s += i
    return s


def sum_range(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def factorial(n):
    r = 1
    while n > 1:
        r *= n
        n -= 1
    return r


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def count_odd(n):
    c = 0
    for i in range(n):
        if i % 2 == 0:
            continue
        c += 1
    return c


def first_square_above(x):
    i = 0
    while True:
        if i * i > x:
            break
        i += 1
    return i


def sum_until_limit(n, limit):
    s = 0
    for i in range(n):
        if s + i > limit:
            break
        s += i
    return s


def find_divisor(n):
    for d in range(2, n):
        if n % d == 0:
            return d
    return n


def nested_break(n):
    total = 0
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            total += j
    return total


def nested_continue(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        for j in range(i):
            total += 1
    return total


def both_return(x):
    if x > 3:
        return x * 2
    else:
        return x - 1


def return_in_one_branch(x):
    if x > 3:
        return x * 10
    return x


def and_or(x, y):
    if x > 0 and y > 0:
        r = 1
    elif x > 0 or y > 0:
        r = 2
    else:
        r = 3
    return r


def negation(x):
    if not x > 2:
        x = x + 100
    return x


def conditional_expression(x):
    return x * 2 if x > 0 else x * 3


def if_in_while(n):
    a = 0
    b = 0
    i = 0
    while i < n:
        if i % 3 == 0:
            a += i
        else:
            b += i
        i += 1
    return a, b


def fibonacci(n):
    a, b = 0, 1
    i = 0
    while i < n:
        a, b = b, a + b
        i += 1
    return a


def float_accumulate(n):
    s = 0.0
    for i in range(n):
        s = s * 0.5 + 1.0
    return s


def compound_condition(n, cap):
    i = 0
    s = 0
    while i < n and s < cap:
        s += i
        i += 1
    return s, i


def nested_if(x, y):
    if x > 0:
        if y > 0:
            z = x + y
        else:
            z = x - y
    else:
        if y > 0:
            z = y - x
        else:
            z = -x - y
    return z


def python_unrolled(x):
    for k in range(3):
        x = x * 2 + k
    return x


def power(base, e):
    result = 1
    while e > 0:
        if e % 2 == 1:
            result *= base
        base *= base
        e //= 2
    return result


def digit_sum(n):
    s = 0
    while n > 0:
        s += n % 10
        n //= 10
    return s


def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


def for_else(n):
    r = 0
    for i in range(n):
        if i == 7:
            r = 1
            break
    else:
        r = 2
    return r


def while_else(n):
    i = 0
    r = 0
    while i < n:
        i += 1
        if i == 5:
            break
    else:
        r = 10
    return r + i


def countdown(n):
    s = 0
    while n > 0:
        n -= 1
        if n % 4 == 0:
            continue
        if n < 2:
            break
        s += n
    return s


def triangular(n):
    t = 0
    for i in range(n):
        for j in range(i + 1):
            t += 1
    return t


def max_of_three(a, b, c):
    m = a
    if b > m:
        m = b
    if c > m:
        m = c
    return m


def running_max(n, seed):
    best = 0
    v = seed
    for i in range(n):
        v = (v * 7 + 3) % 11
        if v > best:
            best = v
    return best


def early_return_nested(n):
    for i in range(n):
        if i > 2:
            if i % 5 == 0:
                return i * 100
    return -1


def while_true_break(x):
    steps = 0
    while True:
        x = x // 2
        steps += 1
        if x == 0:
            break
    return steps


def continue_and_break(n):
    s = 0
    for i in range(n):
        if i % 2 == 1:
            continue
        if i > 10:
            break
        s += i
    return s


def chain_compare(x):
    if 0 < x < 10:
        return 1
    return 0


def accumulate_two(n):
    evens = 0
    odds = 0
    for i in range(n):
        if i % 2 == 0:
            evens += i
        else:
            odds += i
    return evens - odds


def loop_with_temp(n):
    s = 0
    for i in range(n):
        t = i * 3
        s += t
    return s


def temps_in_two_loops(n):
    a = 0
    i = 0
    while i < n:
        t = i + 1
        a += t
        i += 1
    j = 0
    while j < n:
        t = j * 2
        a += t
        j += 1
    return a


def branch_temp(x):
    if x > 0:
        tmp = x * 2
        x = tmp + 1
    return x


def deep_nesting(n):
    c = 0
    for i in range(n):
        for j in range(n):
            if (i + j) % 2 == 0:
                if i > j:
                    c += 2
                else:
                    c += 1
    return c


def loop_return_value(n):
    i = 0
    while i < n:
        if i * i >= 50:
            return i
        i += 1
    return n


def mixed_python_flag(x):
    flag = True
    if flag:
        x = x + 1
    if x > 3:
        x = x * 2
    return x


def python_list_loop(x):
    for c in [1, 2, 3]:
        if x > c:
            x = x - c
    return x


def nested_return_in_while(n):
    i = 0
    while i < n:
        j = 0
        while j < i:
            if i * j == 12:
                return i * 10 + j
            j += 1
        i += 1
    return -1


def sum_of_multiples(n):
    s = 0
    for i in range(1, n):
        if i % 3 == 0 or i % 5 == 0:
            s += i
    return s


def alternate_sign(n):
    s = 0
    sgn = 1
    for i in range(n):
        s += sgn * i
        sgn = -sgn
    return s


def bounded_growth(x):
    while x < 1000:
        x = x * 3 + 1
    return x


def count_bits(n):
    c = 0
    while n > 0:
        c += n % 2
        n //= 2
    return c


def reverse_digits(n):
    r = 0
    while n > 0:
        r = r * 10 + n % 10
        n //= 10
    return r


def select_by_parity(x, y):
    if x % 2 == 0:
        out = x + y
    elif y % 2 == 0:
        out = x * y
    else:
        out = x - y
    return out


def float_newton(x):
    g = x
    for i in range(8):
        g = 0.5 * (g + x / g)
    return g


def float_if(x):
    if x > 1.5:
        y = x * x
    else:
        y = x + 0.25
    return y


def float_while(x):
    n = 0
    while x > 1.0:
        x = x * 0.5
        n += 1
    return x, n


def break_in_nested_if(n):
    s = 0
    i = 0
    while i < n:
        if i > 3:
            if s > 5:
                break
        s += i
        i += 1
    return s


def two_returns_in_loop(n):
    for i in range(n):
        if i == 4:
            return 4
        if i == 9:
            return 9
    return 0


def logical_not_loop(n):
    done = False
    i = 0
    while not done:
        i += 1
        if i >= n:
            done = True
    return i


def arg_min_of_quadratic(n):
    best_i = 0
    best = 10 ** 6
    for i in range(n):
        v = (i - 7) * (i - 7) + 3
        if v < best:
            best = v
            best_i = i
    return best_i, best


def python_bound_tensor_step(x):
    for _ in range(4):
        if x % 2 == 0:
            x = x // 2
        else:
            x = x * 3 + 1
    return x


def break_from_a_staged_for(a, n):
    c = 1
    for i in range(n):
        a = (a + i) % 97
        c = a + 1
        if c > a:
            break
    return a, c


def read_in_one_branch_written_in_both(a, b, d):
    if b * 3 >= 50:
        a = b
    elif 7 < d < 54:
        if (d - a) == 2:
            a += a
        a = d
    return b + d


def return_in_a_loop_never_taken(a, n):
    for i in range(n):
        a = (a + i) % 97
        if 1 % 3 == 0:
            return -1
    return a


PROGRAMS = [
    (absolute, [(-4,), (7,)]), (clip, [(5, 0, 3), (-2, 0, 3), (2, 0, 3)]),
    (sign, [(3,), (-3,), (0,)]), (sum_to, [(10,), (0,)]), (sum_range, [(6,), (1,)]),
    (factorial, [(6,), (1,)]), (collatz_steps, [(27,), (1,)]), (gcd, [(84, 36), (17, 5)]),
    (count_odd, [(9,), (0,)]), (first_square_above, [(50,), (0,)]),
    (sum_until_limit, [(20, 30), (5, 100)]), (find_divisor, [(91,), (13,)]),
    (nested_break, [(5,), (1,)]), (nested_continue, [(7,), (2,)]),
    (both_return, [(5,), (2,)]), (return_in_one_branch, [(5,), (2,)]),
    (and_or, [(1, 1), (1, -1), (-1, -1)]), (negation, [(1,), (5,)]),
    (conditional_expression, [(4,), (-4,)]), (if_in_while, [(10,), (0,)]),
    (fibonacci, [(10,), (1,)]), (float_accumulate, [(5,), (0,)]),
    (compound_condition, [(10, 12), (3, 100)]), (nested_if, [(2, 3), (2, -3), (-2, 3),
                                                             (-2, -3)]),
    (python_unrolled, [(1,), (-5,)]), (power, [(3, 5), (2, 0)]), (digit_sum, [(9875,), (0,)]),
    (is_prime, [(97,), (91,), (1,)]), (for_else, [(5,), (10,)]), (while_else, [(3,), (9,)]),
    (countdown, [(20,), (1,)]), (triangular, [(5,), (0,)]), (max_of_three, [(1, 5, 3),
                                                                         (9, 2, 3)]),
    (running_max, [(10, 4), (0, 1)]), (early_return_nested, [(9,), (4,)]),
    (while_true_break, [(100,), (1,)]), (continue_and_break, [(20,), (5,)]),
    (chain_compare, [(5,), (12,)]), (accumulate_two, [(9,), (0,)]),
    (loop_with_temp, [(5,), (0,)]), (temps_in_two_loops, [(4,), (0,)]),
    (branch_temp, [(3,), (-3,)]), (deep_nesting, [(4,), (1,)]),
    (loop_return_value, [(20,), (3,)]), (mixed_python_flag, [(1,), (5,)]),
    (python_list_loop, [(5,), (1,)]), (nested_return_in_while, [(8,), (3,)]),
    (sum_of_multiples, [(20,), (1,)]), (alternate_sign, [(7,), (0,)]),
    (bounded_growth, [(2,), (5000,)]), (count_bits, [(255,), (0,)]),
    (reverse_digits, [(1234,), (0,)]), (select_by_parity, [(4, 3), (3, 4), (3, 5)]),
    (float_newton, [(2.0,), (9.0,)]), (float_if, [(2.0,), (1.0,)]),
    (float_while, [(10.0,), (0.5,)]), (break_in_nested_if, [(10,), (3,)]),
    (two_returns_in_loop, [(6,), (20,), (2,)]), (logical_not_loop, [(5,), (1,)]),
    (arg_min_of_quadratic, [(12,), (3,)]), (python_bound_tensor_step, [(7,), (16,)]),
    # found by tests/fuzz/autograph_fuzz.py
    (break_from_a_staged_for, [(81, 4), (3, 0)]),
    (read_in_one_branch_written_in_both, [(4, 10, 12), (1, 20, 60)]),
    (return_in_a_loop_never_taken, [(5, 3), (5, 0)]),
]
