from hipporag_neo4j.cli.main import main

main()
