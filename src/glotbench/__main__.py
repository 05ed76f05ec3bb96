from glotbench.cli import main

main()
