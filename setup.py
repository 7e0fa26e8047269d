"""Setup for mtbench: everything comes from settings.ini, the one place nbdev reads too."""
from configparser import ConfigParser
import setuptools, shlex

config = ConfigParser(delimiters=['='])
config.read('settings.ini', encoding='utf-8')
cfg = config['DEFAULT']

cfg_keys = 'version description keywords author author_email'.split()
expected = cfg_keys + "lib_name user branch license status min_python audience language".split()
for o in expected: assert o in cfg, "missing expected setting: {}".format(o)
setup_cfg = {o:cfg[o] for o in cfg_keys}

licenses = {
    'apache2': 'Apache-2.0',
    'mit': 'MIT',
}
statuses = [ '1 - Planning', '2 - Pre-Alpha', '3 - Alpha', '4 - Beta', '5 - Production/Stable', '6 - Mature', '7 - Inactive' ]
py_versions = '3.10 3.11 3.12 3.13'.split()

def reqs(key): return shlex.split(cfg.get(key, '').strip())
requirements = reqs('requirements')
min_python = cfg['min_python']
lic = licenses.get(cfg['license'].lower(), cfg['license'])

setuptools.setup(
    name = cfg['lib_name'],
    license = lic,
    classifiers = [
        'Development Status :: ' + statuses[int(cfg['status'])],
        'Intended Audience :: ' + cfg['audience'].title(),
        'Natural Language :: ' + cfg['language'].title(),
    ] + ['Programming Language :: Python :: '+o for o in py_versions[py_versions.index(min_python):]],
    url = cfg['git_url'],
    packages = setuptools.find_packages(include=[cfg['lib_name'], cfg['lib_name']+'.*']),
    include_package_data = True,
    package_data = {cfg['lib_name']: ['configs/*.json', 'page/*']}, # the seed models' config.json files (mtbench.random_weights); the report page's script and style (mtbench.report)
    install_requires = requirements,
    extras_require = {'dev': reqs('dev_requirements'), 'gpu': reqs('gpu_requirements'),
                      'flash': reqs('flash_requirements'), 'llamacpp': reqs('llamacpp_requirements'),
                      'vllm': reqs('vllm_requirements'), 'wandb': reqs('wandb_requirements')},
    dependency_links = cfg.get('dep_links','').split(),
    python_requires  = '>=' + cfg['min_python'],
    long_description = open('README.md', encoding='utf-8').read(),
    long_description_content_type = 'text/markdown',
    zip_safe = False,
    entry_points = {
        'console_scripts': cfg.get('console_scripts','').split(),
        'nbdev': [f'{cfg.get("lib_path")}={cfg.get("lib_path")}._modidx:d']
    },
    **setup_cfg)
