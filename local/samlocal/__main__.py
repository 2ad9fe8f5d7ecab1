from local.samlocal.sam import main

main()
