# The documents against the code. Included from tests/CMakeLists.txt.

# docs/DESIGN.md's routes (a run, an exchange, a frame): every file:function, function (file),
# call chain and name they give is in the code as they say, so a rename or a moved call fails
# here, not in a reader's hands (tests/test_design_routes.py). Under a second.
golmpi_test(docs_design_routes PYTHON TIMEOUT 60
  COMMAND ${GOLMPI_TEST_DIR}/test_design_routes.py ${PROJECT_SOURCE_DIR})
# ... and the check fails where it must: on copies of DESIGN.md with a name renamed, a chain's
# call changed, a function given the wrong file. Under a second.
golmpi_test(docs_design_routes_mutant PYTHON TIMEOUT 60
  COMMAND ${GOLMPI_TEST_DIR}/test_design_routes.py --mutant ${PROJECT_SOURCE_DIR})
