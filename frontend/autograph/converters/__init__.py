"""AutoGraph's converters, one per construct, in the order conversion.py applies them:

  1. asserts                - `assert` -> `ag__.assert_stmt` (checked at run time on tensors)
  2. return_statements      - early `return` -> `do_return`/`retval_` flags
  3. break_statements       - `break` -> a flag the loop's test reads
  4. continue_statements    - `continue` -> a flag guarding the rest of the body
  5. control_flow           - `if`/`while`/`for` -> `ag__.if_stmt`/`while_stmt`/`for_stmt`
                              over functions of the variables they change
  6. logical_expressions    - `and`/`or`/`not`/`a if c else b` -> `ag__` operators
  7. call_trees             - calls -> `ag__.converted_call` (user functions converted too)

The flags of 2-4 are ordinary variables, so 5 carries them through staged constructs like
any other; 6 and 7 run last to see the code 5 generated.
"""
